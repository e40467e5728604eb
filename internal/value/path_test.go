package value

import (
	"errors"
	"reflect"
	"testing"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	doc := map[string]any{
		"body": map[string]any{
			"items": []any{
				map[string]any{"name": "a", "tags": []any{"x", "y"}},
				map[string]any{"name": "b"},
			},
			"count": 2,
			"empty": nil,
		},
		"0":   "zero key",
		"":    "empty key",
		"s":   "text",
		"arr": []any{10, 20, 30},
	}
	tests := []struct {
		path   string
		want   any
		wantOK bool
	}{
		{"", doc, true},
		{"body.count", 2, true},
		{"body.items.0.name", "a", true},
		{"body.items.1.name", "b", true},
		{"body.items.0.tags.1", "y", true},
		{"body.empty", nil, true},
		{"0", "zero key", true},
		{"arr.2", 30, true},
		{"arr.3", nil, false},
		{"arr.-1", nil, false},
		{"arr.x", nil, false},
		{"arr.1.x", nil, false},
		{"body.missing", nil, false},
		{"missing.deeper", nil, false},
		{"s.length", nil, false},
		{"body.count.x", nil, false},
		{"body.empty.x", nil, false},
	}
	for _, tt := range tests {
		got, ok := Lookup(doc, tt.path)
		if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lookup(doc, %q) = %#v, %v; want %#v, %v", tt.path, got, ok, tt.want, tt.wantOK)
		}
	}
	// A top-level array is indexed too.
	if got, ok := Lookup([]any{"a", "b"}, "1"); !ok || got != "b" {
		t.Errorf(`Lookup(["a","b"], "1") = %#v, %v; want "b", true`, got, ok)
	}
	// A scalar is found only by the empty path.
	if got, ok := Lookup(5, "a"); ok {
		t.Errorf(`Lookup(5, "a") = %#v, %v; want nil, false`, got, ok)
	}
}

// rfc6901Doc is the document of RFC 6901 section 5.
const rfc6901Doc = `{
	"foo": ["bar", "baz"],
	"": 0,
	"a/b": 1,
	"c%d": 2,
	"e^f": 3,
	"g|h": 4,
	"i\\j": 5,
	"k\"l": 6,
	" ": 7,
	"m~n": 8
}`

// TestPointerRFC6901 checks every pointer of RFC 6901 section 5 in its JSON
// string representation.
func TestPointerRFC6901(t *testing.T) {
	t.Parallel()
	doc, err := DecodeString(rfc6901Doc)
	if err != nil {
		t.Fatalf("DecodeString error: %v", err)
	}
	tests := []struct {
		ptr  string
		want any
	}{
		{"", doc},
		{"/foo", []any{"bar", "baz"}},
		{"/foo/0", "bar"},
		{"/", 0},
		{"/a~1b", 1},
		{"/c%d", 2},
		{"/e^f", 3},
		{"/g|h", 4},
		{`/i\j`, 5},
		{`/k"l`, 6},
		{"/ ", 7},
		{"/m~0n", 8},
	}
	for _, tt := range tests {
		p, err := ParsePointer(tt.ptr)
		if err != nil {
			t.Errorf("ParsePointer(%q) error: %v", tt.ptr, err)
			continue
		}
		got, ok := p.Get(doc)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Pointer(%q).Get = %#v, %v; want %#v, true", tt.ptr, got, ok, tt.want)
		}
	}
}

func TestParsePointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Pointer
	}{
		{"", Pointer{}},
		{"/", Pointer{""}},
		{"//", Pointer{"", ""}},
		{"/a/b", Pointer{"a", "b"}},
		{"/a~1b", Pointer{"a/b"}},
		{"/m~0n", Pointer{"m~n"}},
		// ~01 is ~0 then 1: the token "~1", not "/".
		{"/~01", Pointer{"~1"}},
		{"/~10", Pointer{"/0"}},
		{"/~0~1", Pointer{"~/"}},
		{"/~00", Pointer{"~0"}},
		{"/a/", Pointer{"a", ""}},
	}
	for _, tt := range tests {
		got, err := ParsePointer(tt.in)
		if err != nil {
			t.Errorf("ParsePointer(%q) error: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePointer(%q) = %#v; want %#v", tt.in, got, tt.want)
		}
	}
}

func TestParsePointerRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		wantSyntx bool // ErrPointerSyntax: does not start with /
	}{
		{"foo", true},
		{"foo/bar", true},
		{" /foo", true},
		{"$", true},
		{"#/foo", true},
		{"/~", false},
		{"/a~", false},
		{"/~2", false},
		{"/~a", false},
		{"/a~/b", false},
		{"/ok/~x", false},
	}
	for _, tt := range tests {
		got, err := ParsePointer(tt.in)
		if err == nil {
			t.Errorf("ParsePointer(%q) = %#v; want an error", tt.in, got)
			continue
		}
		if errors.Is(err, ErrPointerSyntax) != tt.wantSyntx {
			t.Errorf("ParsePointer(%q) error = %v; want ErrPointerSyntax %v", tt.in, err, tt.wantSyntx)
		}
	}
}

func TestPointerGetArrays(t *testing.T) {
	t.Parallel()
	doc := map[string]any{
		"arr":  []any{"a", "b", []any{"c"}},
		"obj":  map[string]any{"0": "zero", "01": "zero-one", "-": "dash"},
		"text": "abc",
		"null": nil,
	}
	tests := []struct {
		ptr    string
		want   any
		wantOK bool
	}{
		{"/arr/0", "a", true},
		{"/arr/1", "b", true},
		{"/arr/2/0", "c", true},
		{"/arr/3", nil, false},
		{"/arr/01", nil, false},
		{"/arr/00", nil, false},
		{"/arr/-", nil, false},
		{"/arr/-1", nil, false},
		{"/arr/+1", nil, false},
		{"/arr/ 1", nil, false},
		{"/arr/1.0", nil, false},
		{"/arr/", nil, false},
		{"/arr/99999999999999999999999", nil, false},
		// On an object, the same tokens are member names.
		{"/obj/0", "zero", true},
		{"/obj/01", "zero-one", true},
		{"/obj/-", "dash", true},
		{"/obj/1", nil, false},
		{"/text/0", nil, false},
		{"/null", nil, true},
		{"/null/x", nil, false},
		{"/missing", nil, false},
		{"/missing/deeper", nil, false},
	}
	for _, tt := range tests {
		p, err := ParsePointer(tt.ptr)
		if err != nil {
			t.Errorf("ParsePointer(%q) error: %v", tt.ptr, err)
			continue
		}
		got, ok := p.Get(doc)
		if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Pointer(%q).Get = %#v, %v; want %#v, %v", tt.ptr, got, ok, tt.want, tt.wantOK)
		}
	}
	// The empty pointer finds any document, a scalar included.
	if got, ok := (Pointer{}).Get("x"); !ok || got != "x" {
		t.Errorf(`Pointer("").Get("x") = %#v, %v; want "x", true`, got, ok)
	}
}
