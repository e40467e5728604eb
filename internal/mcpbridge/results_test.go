package mcpbridge

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, é 中 😀", "plain text, é 中 😀"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"a\x00b\x07c\x1bd\re\x7ff", "abcdef"},
		{"c1\u0080\u0085\u009f.", "c1."},
		{"bidi\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c.", "bidi."},
		{"zero\u200b\u200c\u200d\ufeff\u2060width", "zerowidth"},
		{"tag\U000E0000\U000E0041\U000E007F.", "tag."},
		{"keep\u200a\u2061\U000E0080", "keep\u200a\u2061\U000E0080"}, // neighbours of the ranges stay
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"literal \uFFFD stays", "literal \uFFFD stays"},
	} {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestLimitOutput(t *testing.T) {
	t.Parallel()
	v := map[string]any{"s": strings.Repeat("é", 100), "k\u202e": "x\u200by"}
	small, err := limitOutput(v, 1024)
	if err != nil || small.Truncated || small.OriginalBytes != small.ReturnedBytes {
		t.Fatalf("limitOutput = %+v, %v; want it whole", small, err)
	}
	if m := small.Data.(map[string]any); m["k"] != "xy" {
		t.Errorf("limitOutput data %v; want hidden characters stripped", m)
	}
	for _, max := range []int{10, 11, 12, 13} {
		out, err := limitOutput(v, max)
		s, _ := out.Data.(string)
		if err != nil || !out.Truncated || out.ReturnedBytes > max || out.ReturnedBytes != len(s) || !utf8.ValidString(s) ||
			!strings.HasPrefix(`{"k":"xy","s":"`+strings.Repeat("é", 100), s) || out.OriginalBytes != 217 {
			t.Errorf("limitOutput(max %d) = %+v, %v", max, out, err)
		}
		if json.Valid([]byte(s)) {
			t.Errorf("cut output %q is valid JSON", s)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	params := []param{
		{name: "id", kind: kindString, required: true},
		{name: "n", kind: kindInt, min: 1, max: 10, clamp: true},
		{name: "b", kind: kindBool},
		{name: "w", kind: kindWorkflow},
	}
	a, err := decodeArgs(json.RawMessage(`{"id":"x","n":"12","b":"true","w":"{\"id\":1}"}`), params)
	if err != nil || a.str("id") != "x" || a.num("n", 0) != 10 || !a.flag("b") || string(a.doc("w")) != `{"id":1}` {
		t.Errorf("decodeArgs = %v, %v", a, err)
	}
	a, err = decodeArgs(json.RawMessage(`{"id":"x","n":3.0,"w":{"id": "y"}}`), params)
	if err != nil || a.num("n", 0) != 3 || a.has("b") || string(a.doc("w")) != `{"id": "y"}` {
		t.Errorf("decodeArgs = %v, %v", a, err)
	}
	if _, err := decodeArgs(json.RawMessage(`{"n":2,"zz":1}`), params); err == nil ||
		err.Error() != "failed to deserialize parameters: unknown field zz, expected one of id, n, b, w" {
		t.Errorf("unknown and missing: %v; want the unknown field first", err)
	}
	if _, err := decodeArgs(json.RawMessage(`{"n":99999999999999999999}`), params); err == nil || !strings.Contains(err.Error(), "expected an integer") {
		t.Errorf("huge integer: %v", err)
	}
}

// TestImports keeps the bridge a client of the REST API (STYLE.md rule 5):
// neither binary links the store, the HTTP server or the scheduler.
func TestImports(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"svc-mcp", "svc-mcp-offline"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/svcrun/svc/cmd/"+cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range []string{"internal/store", "internal/httpapi", "internal/scheduler"} {
				if strings.HasPrefix(dep, "github.com/svcrun/svc/"+banned) {
					t.Errorf("%s depends on %s", cmd, dep)
				}
			}
		}
	}
}
