package email

import (
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestSplitAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"a@example.com", []string{"a@example.com"}},
		{" a@example.com , b@example.com ", []string{"a@example.com", "b@example.com"}},
		{"a@example.com,,b@example.com,", []string{"a@example.com", "b@example.com"}},
		{`"Smith, John" <j@example.com>, b@example.com`, []string{`"Smith, John" <j@example.com>`, "b@example.com"}},
		{`"Say \"hi, there\"" <j@example.com>,b@example.com`, []string{`"Say \"hi, there\"" <j@example.com>`, "b@example.com"}},
		{`Bob <b@example.com, c@example.com>, d@example.com`, []string{`Bob <b@example.com, c@example.com>`, "d@example.com"}},
		{`"a,b"@example.com, c@example.com`, []string{`"a,b"@example.com`, "c@example.com"}},
		{`j@example.com (Smith, John), k@example.com`, []string{`j@example.com (Smith, John)`, "k@example.com"}},
		{`x@example.com (a (nested, comment)), y@example.com`, []string{`x@example.com (a (nested, comment))`, "y@example.com"}},
		{`"unclosed, a@example.com, b@example.com`, []string{`"unclosed, a@example.com, b@example.com`}},
		{"", nil},
		{" , ", nil},
	}
	for _, tt := range tests {
		if got := splitAddresses(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitAddresses(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRecipients(t *testing.T) {
	t.Parallel()
	fifty := make([]any, 50)
	for i := range fifty {
		fifty[i] = "r@example.com"
	}
	tests := []struct {
		name string
		in   any
		want []string // name|address of each recipient
	}{
		{"one", "a@example.com", []string{"|a@example.com"}},
		{"comma-separated", "a@example.com, B <b@example.com>", []string{"|a@example.com", "B|b@example.com"}},
		{"quoted comma", `"Smith, John" <j@example.com>`, []string{"Smith, John|j@example.com"}},
		{"quoted local part", `"a,b"@example.com`, []string{"|a,b@example.com"}},
		{"comment as name", `j@example.com (Smith, John)`, []string{"Smith, John|j@example.com"}},
		{"encoded name", `=?utf-8?q?Zo=C3=AB?= <z@example.com>`, []string{"Zoë|z@example.com"}},
		{"UTF-8 name", `Zoë <z@example.com>`, []string{"Zoë|z@example.com"}},
		{"array", []any{"a@example.com", "B <b@example.com>"}, []string{"|a@example.com", "B|b@example.com"}},
		{"array entries split too", []any{"a@example.com, b@example.com", `"C, D" <c@example.com>`},
			[]string{"|a@example.com", "|b@example.com", "C, D|c@example.com"}},
		{"array skips blanks", []any{"", " a@example.com "}, []string{"|a@example.com"}},
		{"Go string slice", []string{"a@example.com"}, []string{"|a@example.com"}},
	}
	for _, tt := range tests {
		got, err := parseRecipients(tt.in)
		if err != nil {
			t.Errorf("%s: parseRecipients(%#v) error: %v", tt.name, tt.in, err)
			continue
		}
		var names []string
		for _, a := range got {
			names = append(names, a.Name+"|"+a.Address)
		}
		if !reflect.DeepEqual(names, tt.want) {
			t.Errorf("%s: parseRecipients(%#v) = %q; want %q", tt.name, tt.in, names, tt.want)
		}
	}
	if got, err := parseRecipients(fifty); err != nil || len(got) != 50 {
		t.Errorf("parseRecipients(50 addresses) = %d, %v; want 50, nil", len(got), err)
	}

	fails := []struct {
		name string
		in   any
		want string
	}{
		{"51 in an array", append(fifty, "x@example.com"), "51 recipients; at most 50"},
		{"51 when array entries split", append(fifty[:49:49], "x@example.com, y@example.com"), "51 recipients"},
		{"51 as text", strings.Repeat("r@example.com, ", 51), "51 recipients"},
		{"number", 3.0, "not number"},
		{"boolean", false, "not boolean"},
		{"object", map[string]any{}, "not object"},
		{"null entry", []any{nil}, "entry 0 is null"},
		{"object entry", []any{"a@example.com", map[string]any{}}, "entry 1 is object"},
		{"not an address", "a@example.com, not-an-address", "recipient 2"},
		{"comma inside angle brackets", "Bob <b@example.com, c@example.com>", "recipient 1"},
		{"group", "undisclosed-recipients:;", "not an email address"},
		{"CR LF", "a@example.com\r\nBcc: v@example.com", "line breaks"},
		{"LF in array", []any{"a@example.com\nBcc: v@example.com"}, "line breaks"},
		{"address outside ASCII", "josé@example.com", "outside ASCII"},
		{"over-long name", strings.Repeat("n", 950) + " <a@example.com>", "longer than 900"},
		{"nothing", ",", "no recipients"},
	}
	for _, tt := range fails {
		_, err := parseRecipients(tt.in)
		nodetest.WantError(t, tt.name, err, CodeInvalidTo, "to")
		if err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q; want it to say %q", tt.name, err, tt.want)
		}
	}
}

func TestEnvelope(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a@example.com":              "a@example.com",
		"Name <a@example.com>":       "a@example.com",
		`"a,b"@example.com`:          `"a,b"@example.com`,
		`"first last"@example.com`:   `"first last"@example.com`,
		"x@[192.0.2.1]":              "x@[192.0.2.1]",
		"o'brien+tag@sub.example.io": "o'brien+tag@sub.example.io",
	} {
		a, err := parseAddress(in)
		if err != nil {
			t.Errorf("parseAddress(%q) error: %v", in, err)
			continue
		}
		if got := envelope(a); got != want {
			t.Errorf("envelope(%q) = %q; want %q", in, got, want)
		}
	}
}
