package node_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
)

// decodeOne decodes {name: raw} against a spec holding only f.
func decodeOne(f node.Field, raw any, present bool) (any, error) {
	s := &node.Spec{TypeID: "t", Fields: []node.Field{f}}
	in := map[string]any{}
	if present {
		in[f.Name] = raw
	}
	c, err := s.Decode(in)
	if err != nil {
		return nil, err
	}
	return c.Value(f.Name), nil
}

type decodeCase struct {
	name  string
	field node.Field
	raw   any
	want  any
}

func runDecodeCases(t *testing.T, tests []decodeCase) {
	t.Helper()
	for _, tt := range tests {
		got, err := decodeOne(tt.field, tt.raw, true)
		if err != nil {
			t.Errorf("%s: Decode(%#v) error: %v", tt.name, tt.raw, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Decode(%#v) = %#v (%T); want %#v (%T)", tt.name, tt.raw, got, got, tt.want, tt.want)
		}
	}
}

type failCase struct {
	name     string
	field    node.Field
	raw      any
	wantCode string
	wantMsg  string // a substring of the message, besides the field name
}

func runFailCases(t *testing.T, tests []failCase) {
	t.Helper()
	for _, tt := range tests {
		got, err := decodeOne(tt.field, tt.raw, true)
		if err == nil {
			t.Errorf("%s: Decode(%#v) = %#v; want error %s", tt.name, tt.raw, got, tt.wantCode)
			continue
		}
		var ne *node.Error
		if !errors.As(err, &ne) {
			t.Errorf("%s: Decode(%#v) error %T %v; want *node.Error", tt.name, tt.raw, err, err)
			continue
		}
		if ne.Code != tt.wantCode || ne.Field != tt.field.Name {
			t.Errorf("%s: Decode(%#v) error code %q field %q; want %q, %q", tt.name, tt.raw, ne.Code, ne.Field, tt.wantCode, tt.field.Name)
		}
		if !strings.Contains(err.Error(), tt.field.Name) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s: Decode(%#v) error %q; want it to name %q and say %q", tt.name, tt.raw, err, tt.field.Name, tt.wantMsg)
		}
	}
}

func TestDecodeBlankUsesDefault(t *testing.T) {
	t.Parallel()
	fields := []node.Field{
		{Name: "text", Kind: node.KindText, Default: "dflt"},
		{Name: "num", Kind: node.KindNumber, Default: 1.0},
		{Name: "int", Kind: node.KindInteger, Default: 3},
		{Name: "bool", Kind: node.KindBoolean, Default: true},
		{Name: "enum", Kind: node.KindEnum, Enum: []string{"a", "b"}, Default: "b"},
		{Name: "json", Kind: node.KindJSON, Default: map[string]any{"d": 1}},
		{Name: "obj", Kind: node.KindObject, Default: map[string]any{}},
		{Name: "arr", Kind: node.KindArray, Default: []any{}},
		{Name: "list", Kind: node.KindList, Default: []string{"x"}},
		{Name: "nodefault", Kind: node.KindNumber},
	}
	for _, blank := range []struct {
		name    string
		raw     any
		present bool
	}{
		{"absent", nil, false},
		{"null", nil, true},
		{"empty text", "", true},
		{"white space", " \t\n ", true},
	} {
		for _, f := range fields {
			got, err := decodeOne(f, blank.raw, blank.present)
			if err != nil {
				t.Errorf("%s %s: Decode error: %v", blank.name, f.Name, err)
				continue
			}
			if !reflect.DeepEqual(got, f.Default) {
				t.Errorf("%s %s: Decode = %#v; want the default %#v", blank.name, f.Name, got, f.Default)
			}
		}
	}
}

// TestDecodeAnyBlank: a KindAny field holds any JSON value, so only null (or
// absence) is blank; empty text is a value.
func TestDecodeAnyBlank(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "v", Kind: node.KindAny, Default: "dflt"}
	runDecodeCases(t, []decodeCase{
		{"empty text kept", f, "", ""},
		{"space kept", f, " ", " "},
		{"zero kept", f, 0, 0},
		{"false kept", f, false, false},
		{"object kept", f, map[string]any{"a": 1}, map[string]any{"a": 1}},
		{"null uses default", f, nil, "dflt"},
	})
}

func TestDecodeRequired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		field    node.Field
		raw      any
		present  bool
		wantCode string
	}{
		{"absent", node.Field{Name: "url", Kind: node.KindText, Required: true}, nil, false, node.CodeInvalidConfig},
		{"null", node.Field{Name: "url", Kind: node.KindText, Required: true}, nil, true, node.CodeInvalidConfig},
		{"empty", node.Field{Name: "url", Kind: node.KindText, Required: true}, "", true, node.CodeInvalidConfig},
		{"white space", node.Field{Name: "url", Kind: node.KindText, Required: true}, "  ", true, node.CodeInvalidConfig},
		{"with a default", node.Field{Name: "url", Kind: node.KindText, Required: true, Default: "x"}, "", true, node.CodeInvalidConfig},
		{"number", node.Field{Name: "port", Kind: node.KindNumber, Required: true}, nil, false, node.CodeInvalidConfig},
		{"any", node.Field{Name: "v", Kind: node.KindAny, Required: true}, nil, true, node.CodeInvalidConfig},
		{"MissingCode", node.Field{Name: "url", Kind: node.KindText, Required: true, MissingCode: "MISSING_URL", Code: "INVALID_URL"}, "", true, "MISSING_URL"},
	}
	for _, tt := range tests {
		got, err := decodeOne(tt.field, tt.raw, tt.present)
		var ne *node.Error
		if !errors.As(err, &ne) {
			t.Errorf("%s: Decode = %#v, %v; want *node.Error %s", tt.name, got, err, tt.wantCode)
			continue
		}
		if ne.Code != tt.wantCode || ne.Field != tt.field.Name || !strings.Contains(ne.Error(), tt.field.Name) {
			t.Errorf("%s: Decode error code %q field %q message %q; want code %q naming %q", tt.name, ne.Code, ne.Field, ne.Error(), tt.wantCode, tt.field.Name)
		}
	}
	// A required field that holds a value passes.
	if got, err := decodeOne(node.Field{Name: "url", Kind: node.KindText, Required: true}, "http://x", true); err != nil || got != "http://x" {
		t.Errorf("required url: Decode = %#v, %v; want \"http://x\", nil", got, err)
	}
}

func TestDecodeText(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "t", Kind: node.KindText}
	runDecodeCases(t, []decodeCase{
		{"text", f, "hello", "hello"},
		{"text with spaces kept", f, "  hi  ", "  hi  "},
		{"number kept", f, 12, 12},
		{"float kept", f, 1.5, 1.5},
		{"bool kept", f, true, true},
		{"object kept", f, map[string]any{"a": 1}, map[string]any{"a": 1}},
		{"array kept", f, []any{1, "x"}, []any{1, "x"}},
		{"expression text kept", f, "{{ $input.x }}", "{{ $input.x }}"},
	})
}

func TestDecodeNumber(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "n", Kind: node.KindNumber}
	bounded := node.Field{Name: "n", Kind: node.KindNumber, Min: node.Bound(1), Max: node.Bound(10)}
	runDecodeCases(t, []decodeCase{
		{"number", f, 2.5, 2.5},
		{"int", f, 12, 12.0},
		{"text", f, "12", 12.0},
		{"text with spaces", f, " 3.5 ", 3.5},
		{"exponent text", f, "1e3", 1000.0},
		{"negative text", f, "-4", -4.0},
		{"in range", bounded, 5, 5.0},
		{"at min", bounded, 1, 1.0},
		{"at max", bounded, "10", 10.0},
		{"below min clamped", bounded, 0, 1.0},
		{"far below min clamped", bounded, "-100", 1.0},
		{"above max clamped", bounded, 11, 10.0},
		{"far above max clamped", bounded, 1e9, 10.0},
		{"only min", node.Field{Name: "n", Kind: node.KindNumber, Min: node.Bound(0)}, -3, 0.0},
		{"only max", node.Field{Name: "n", Kind: node.KindNumber, Max: node.Bound(0)}, 3, 0.0},
	})
	strict := node.Field{Name: "port", Kind: node.KindNumber, Min: node.Bound(1024), Max: node.Bound(65535), Strict: true, Code: node.CodeInvalidPort}
	runDecodeCases(t, []decodeCase{
		{"strict in range", strict, "3456", 3456.0},
	})
	runFailCases(t, []failCase{
		{"abc", f, "abc", node.CodeInvalidConfig, "not a number"},
		{"number then text", f, "12abc", node.CodeInvalidConfig, "not a number"},
		{"NaN text", f, "NaN", node.CodeInvalidConfig, "not a number"},
		{"Inf text", f, "Inf", node.CodeInvalidConfig, "not a number"},
		{"overflowing text", f, "1e400", node.CodeInvalidConfig, "not a number"},
		{"boolean", f, true, node.CodeInvalidConfig, "not a number"},
		{"object", f, map[string]any{}, node.CodeInvalidConfig, "not a number"},
		{"array", f, []any{1}, node.CodeInvalidConfig, "not a number"},
		{"strict below", strict, 80, node.CodeInvalidPort, "at least 1024"},
		{"strict above", strict, "70000", node.CodeInvalidPort, "at most 65535"},
		{"field code on unreadable", strict, "http", node.CodeInvalidPort, "not a number"},
	})
}

func TestDecodeInteger(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "i", Kind: node.KindInteger}
	bounded := node.Field{Name: "i", Kind: node.KindInteger, Min: node.Bound(0), Max: node.Bound(100)}
	runDecodeCases(t, []decodeCase{
		{"int", f, 7, 7},
		{"whole float", f, 7.0, 7},
		{"text", f, "7", 7},
		{"whole text with decimals", f, "7.0", 7},
		{"negative", f, -2, -2},
		{"clamped low", bounded, -5, 0},
		{"clamped high", bounded, "1000", 100},
	})
	runFailCases(t, []failCase{
		{"fraction", f, 2.5, node.CodeInvalidConfig, "whole number"},
		{"fraction text", f, "2.5", node.CodeInvalidConfig, "whole number"},
		{"text", f, "seven", node.CodeInvalidConfig, "not a number"},
		{"too large", f, 1e300, node.CodeInvalidConfig, "out of range"},
	})
}

func TestDecodeBoolean(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "b", Kind: node.KindBoolean, Default: false}
	runDecodeCases(t, []decodeCase{
		{"true", f, true, true},
		{"false", f, false, false},
		{"yes", f, "yes", true},
		{"no", f, "no", false},
		{"TRUE", f, "TRUE", true},
		{"False", f, " False ", false},
		{"on", f, "on", true},
		{"off", f, "off", false},
		{"text 1", f, "1", true},
		{"text 0", f, "0", false},
		{"number 1", f, 1, true},
		{"number 0", f, 0, false},
		{"float 1", f, 1.0, true},
	})
	runFailCases(t, []failCase{
		{"maybe", f, "maybe", node.CodeInvalidConfig, "not true or false"},
		{"2", f, 2, node.CodeInvalidConfig, "not true or false"},
		{"text 2", f, "2", node.CodeInvalidConfig, "not true or false"},
		{"object", f, map[string]any{}, node.CodeInvalidConfig, "not true or false"},
	})
}

func TestDecodeEnum(t *testing.T) {
	t.Parallel()
	exact := node.Field{Name: "method", Kind: node.KindEnum, Enum: []string{"GET", "POST"}, Default: "GET"}
	fold := node.Field{Name: "method", Kind: node.KindEnum, Enum: []string{"GET", "POST"}, FoldCase: true}
	coded := node.Field{Name: "format", Kind: node.KindEnum, Enum: []string{"txt", "md"}, Code: "INVALID_FORMAT"}
	runDecodeCases(t, []decodeCase{
		{"exact", exact, "POST", "POST"},
		{"surrounding space", exact, " POST ", "POST"},
		{"fold lower", fold, "post", "POST"},
		{"fold mixed", fold, "GeT", "GET"},
		{"fold exact", fold, "GET", "GET"},
		{"coded ok", coded, "md", "md"},
	})
	runFailCases(t, []failCase{
		{"wrong case without FoldCase", exact, "post", node.CodeInvalidConfig, "GET, POST"},
		{"unknown", exact, "PUT", node.CodeInvalidConfig, "must be one of"},
		{"unknown folded", fold, "put", node.CodeInvalidConfig, "must be one of"},
		{"number", exact, 1, node.CodeInvalidConfig, "must be one of"},
		{"boolean", exact, true, node.CodeInvalidConfig, "must be one of"},
		{"per-field code", coded, "pdfx", "INVALID_FORMAT", "txt, md"},
	})
}

func TestDecodeNoExpressions(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "query", Kind: node.KindText, NoExpressions: true}
	coded := node.Field{Name: "query", Kind: node.KindText, NoExpressions: true, Code: "INVALID_QUERY"}
	runDecodeCases(t, []decodeCase{
		{"plain", f, "SELECT 1", "SELECT 1"},
		{"single braces", f, "SELECT '{x}'", "SELECT '{x}'"},
	})
	runFailCases(t, []failCase{
		{"expression", f, "SELECT * FROM t WHERE id = {{ $input.id }}", node.CodeInvalidConfig, "expressions are not allowed"},
		{"open braces only", f, "x {{", node.CodeInvalidConfig, "expressions are not allowed"},
		{"field code", coded, "{{x}}", "INVALID_QUERY", "expressions are not allowed"},
	})
}

func TestDecodeJSONKinds(t *testing.T) {
	t.Parallel()
	js := node.Field{Name: "j", Kind: node.KindJSON}
	obj := node.Field{Name: "o", Kind: node.KindObject}
	arr := node.Field{Name: "a", Kind: node.KindArray}
	runDecodeCases(t, []decodeCase{
		{"json object text", js, `{"a": 1}`, map[string]any{"a": 1}},
		{"json array text", js, ` [1, "x"] `, []any{1, "x"}},
		{"json number text", js, "5", 5},
		{"json string text", js, `"s"`, "s"},
		{"json null text", js, "null", nil},
		{"json object", js, map[string]any{"a": 1.5}, map[string]any{"a": 1.5}},
		{"json number", js, 5, 5},
		{"json bool", js, true, true},
		{"object text", obj, `{"k": [true]}`, map[string]any{"k": []any{true}}},
		{"object", obj, map[string]any{"k": "v"}, map[string]any{"k": "v"}},
		{"empty object text", obj, "{}", map[string]any{}},
		{"array text", arr, `[{"a": 1}]`, []any{map[string]any{"a": 1}}},
		{"array", arr, []any{1, 2}, []any{1, 2}},
		{"empty array text", arr, "[]", []any{}},
	})
	runFailCases(t, []failCase{
		{"json bad text", js, "{nope", node.CodeInvalidConfig, "not valid JSON"},
		{"json plain word", js, "hello", node.CodeInvalidConfig, "not valid JSON"},
		{"json trailing data", js, `{"a":1} x`, node.CodeInvalidConfig, "not valid JSON"},
		{"object bad text", obj, `{"a":`, node.CodeInvalidConfig, "not valid JSON"},
		{"object from array text", obj, "[1]", node.CodeInvalidConfig, "must be a JSON object"},
		{"object from array", obj, []any{1}, node.CodeInvalidConfig, "must be a JSON object"},
		{"object from number text", obj, "5", node.CodeInvalidConfig, "must be a JSON object"},
		{"object from number", obj, 5, node.CodeInvalidConfig, "must be a JSON object"},
		{"array from object text", arr, `{"a":1}`, node.CodeInvalidConfig, "must be a JSON array"},
		{"array from object", arr, map[string]any{}, node.CodeInvalidConfig, "must be a JSON array"},
		{"array from text", arr, `"x"`, node.CodeInvalidConfig, "must be a JSON array"},
		{"array bad text", arr, "[1,", node.CodeInvalidConfig, "not valid JSON"},
	})
}

func TestDecodeList(t *testing.T) {
	t.Parallel()
	f := node.Field{Name: "tags", Kind: node.KindList}
	runDecodeCases(t, []decodeCase{
		{"comma text", f, "a, b,,c", []string{"a", "b", "c"}},
		{"one item", f, "solo", []string{"solo"}},
		{"spaces trimmed", f, "  x  ,  y ", []string{"x", "y"}},
		{"array", f, []any{"a", " b ", ""}, []string{"a", "b"}},
		{"scalars as text", f, []any{1, true, 2.5, nil, "z"}, []string{"1", "true", "2.5", "z"}},
		{"empty array", f, []any{}, []string{}},
	})
	runFailCases(t, []failCase{
		{"nested object", f, []any{"a", map[string]any{"b": 1}}, node.CodeInvalidConfig, "entry 1"},
		{"nested array", f, []any{[]any{"a"}}, node.CodeInvalidConfig, "entry 0"},
		{"object", f, map[string]any{"a": 1}, node.CodeInvalidConfig, "must be a list"},
		{"number", f, 5, node.CodeInvalidConfig, "must be a list"},
	})
}

// TestDecodeFirstFailure: fields are decoded in order and the first failing
// one is reported; undeclared keys are ignored.
func TestDecodeFirstFailure(t *testing.T) {
	t.Parallel()
	s := &node.Spec{TypeID: "t", Fields: []node.Field{
		{Name: "a", Kind: node.KindText},
		{Name: "b", Kind: node.KindNumber},
		{Name: "c", Kind: node.KindBoolean},
	}}
	_, err := s.Decode(map[string]any{"a": "ok", "b": "x", "c": "y", "extra": "ignored"})
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Field != "b" {
		t.Errorf("Decode error = %v; want one naming field b", err)
	}
	c, err := s.Decode(map[string]any{"a": "ok", "extra": map[string]any{}})
	if err != nil {
		t.Fatalf("Decode error: %v", err)
	}
	if got := c.String("a"); got != "ok" {
		t.Errorf("String(a) = %q; want %q", got, "ok")
	}
	// A nil raw config is all blanks.
	if _, err := s.Decode(nil); err != nil {
		t.Errorf("Decode(nil) error: %v", err)
	}
}

func TestConfigAccessors(t *testing.T) {
	t.Parallel()
	s := &node.Spec{TypeID: "t", Fields: []node.Field{
		{Name: "text", Kind: node.KindText},
		{Name: "num", Kind: node.KindNumber},
		{Name: "int", Kind: node.KindInteger},
		{Name: "bool", Kind: node.KindBoolean},
		{Name: "list", Kind: node.KindList},
		{Name: "obj", Kind: node.KindObject},
		{Name: "arr", Kind: node.KindArray},
		{Name: "blank", Kind: node.KindText},
		{Name: "numtext", Kind: node.KindText},
	}}
	c, err := s.Decode(map[string]any{
		"text": "hi", "num": "2.5", "int": "4", "bool": "yes", "list": "a,b",
		"obj": `{"k":1}`, "arr": "[1]", "blank": "  ", "numtext": 12,
	})
	if err != nil {
		t.Fatalf("Decode error: %v", err)
	}
	if got := c.String("text"); got != "hi" {
		t.Errorf("String(text) = %q; want %q", got, "hi")
	}
	if got := c.String("numtext"); got != "12" {
		t.Errorf("String(numtext) = %q; want %q", got, "12")
	}
	if got := c.Float("num"); got != 2.5 {
		t.Errorf("Float(num) = %v; want 2.5", got)
	}
	if got := c.Int("int"); got != 4 {
		t.Errorf("Int(int) = %v; want 4", got)
	}
	if got := c.Bool("bool"); !got {
		t.Errorf("Bool(bool) = %v; want true", got)
	}
	if got := c.List("list"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("List(list) = %#v; want [a b]", got)
	}
	if got := c.Object("obj"); !reflect.DeepEqual(got, map[string]any{"k": 1}) {
		t.Errorf("Object(obj) = %#v; want {k:1}", got)
	}
	if got := c.Array("arr"); !reflect.DeepEqual(got, []any{1}) {
		t.Errorf("Array(arr) = %#v; want [1]", got)
	}
	if !c.Blank("blank") || c.Blank("text") {
		t.Errorf("Blank(blank), Blank(text) = %v, %v; want true, false", c.Blank("blank"), c.Blank("text"))
	}
	if got := c.Object("arr"); got != nil {
		t.Errorf("Object(arr) = %#v; want nil", got)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Value(undeclared) did not panic")
		}
	}()
	c.Value("undeclared")
}

func TestCredentialRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     any
		want   string
		wantOK bool
	}{
		{map[string]any{"credential": "cred-1"}, "cred-1", true},
		{map[string]any{"credential": ""}, "", false},
		{map[string]any{"credential": 5}, "", false},
		{map[string]any{"credential": "c", "other": 1}, "", false},
		{"sk-secret", "", false},
		{nil, "", false},
	}
	for _, tt := range tests {
		got, ok := node.CredentialRef(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("CredentialRef(%#v) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestKindExpressions: rule 2, text fields take {{ }} expressions, number and
// enumerated fields do not.
func TestKindExpressions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind node.Kind
		want bool
	}{
		{node.KindText, true},
		{node.KindAny, true},
		{node.KindJSON, true},
		{node.KindObject, true},
		{node.KindArray, true},
		{node.KindList, true},
		{node.KindNumber, false},
		{node.KindInteger, false},
		{node.KindBoolean, false},
		{node.KindEnum, false},
	}
	for _, tt := range tests {
		if got := tt.kind.Expressions(); got != tt.want {
			t.Errorf("Kind(%d).Expressions() = %v; want %v", tt.kind, got, tt.want)
		}
	}
}
