package value

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want any
	}{
		{"0", 0},
		{"-0", 0},
		{"42", 42},
		{"-7", -7},
		{"9007199254740993", 9007199254740993},
		{"9223372036854775807", math.MaxInt64},
		{"9223372036854775808", 9223372036854775808.0},
		{"-9223372036854775809", -9223372036854775809.0},
		{"100000000000000000000000", 1e23},
		{"1.0", 1.0},
		{"1.5", 1.5},
		{"1e2", 100.0},
		{"1E2", 100.0},
		{"2e-3", 0.002},
		{"-0.25", -0.25},
	}
	for _, tt := range tests {
		got, err := DecodeString(tt.in)
		if err != nil {
			t.Errorf("DecodeString(%q) error: %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("DecodeString(%q) = %#v (%T); want %#v (%T)", tt.in, got, got, tt.want, tt.want)
		}
	}
}

func TestDecodeNested(t *testing.T) {
	t.Parallel()
	got, err := Decode([]byte(` {"a": [1, 2.5, {"b": null, "c": true}], "d": "x", "e": 12345678901} `))
	if err != nil {
		t.Fatalf("Decode error: %v", err)
	}
	want := map[string]any{
		"a": []any{1, 2.5, map[string]any{"b": nil, "c": true}},
		"d": "x",
		"e": 12345678901,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode = %#v; want %#v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	bad := []string{
		"",
		"   ",
		`{"a":1} x`,
		`{"a":1}{"b":2}`,
		"1 2",
		`[1]]`,
		`"a" "b"`,
		"{",
		"[1,]",
		"{'a':1}",
		"nul",
		"1e400",
		`{"deep":[1, -2e999]}`,
		"01",
		"NaN",
	}
	for _, in := range bad {
		if got, err := DecodeString(in); err == nil {
			t.Errorf("DecodeString(%q) = %#v; want an error", in, got)
		}
	}
	// Trailing white space is not trailing data.
	if _, err := DecodeString("[1] \n\t"); err != nil {
		t.Errorf("DecodeString(%q) error: %v; want none", "[1] \\n\\t", err)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"plain", "plain"},
		{"", ""},
		{true, "true"},
		{false, "false"},
		{0, "0"},
		{-12, "-12"},
		{3.0, "3"},
		{-3.0, "-3"},
		{0.1, "0.1"},
		{1.5, "1.5"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{1.5e21, "1.5e+21"},
		{-1e21, "-1e+21"},
		{1234567.5, "1234567.5"},
		{123456789.125, "123456789.125"},
		{0.0001, "0.0001"},
		{0.000001, "0.000001"},
		{1.5e-7, "1.5e-7"},
		{1e-7, "1e-7"},
		{int64(9), "9"},
		{float32(0.5), "0.5"},
		{uint8(200), "200"},
		{[]any{1, "a", nil}, `[1,"a",null]`},
		{map[string]any{"b": 1, "a": []any{}}, `{"a":[],"b":1}`},
		{map[string]any{}, "{}"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%#v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestTextMatchesJSON holds Text to its promise that numbers appear in their
// JSON form.
func TestTextMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 0.5, 1, 1e6, 1234567.5, 1e20, 1e21, 1e-6, 1e-7, 2.5e-9, 1.7976931348623157e308, 5e-324, -42.125} {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatalf("json.Marshal(%v) error: %v", f, err)
		}
		if got := Text(f); got != string(b) {
			t.Errorf("Text(%v) = %q; want %q (its JSON form)", f, got, b)
		}
	}
}

func TestTypeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{"x", "string"},
		{true, "boolean"},
		{1, "number"},
		{1.5, "number"},
		{int64(1), "number"},
		{uint16(1), "number"},
		{float32(1), "number"},
		{map[string]any{}, "object"},
		{[]any{}, "array"},
		{[]string{"a"}, "array"},
		{map[string]int{}, "object"},
		{struct{}{}, "object"},
	}
	for _, tt := range tests {
		if got := TypeName(tt.in); got != tt.want {
			t.Errorf("TypeName(%#v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     any
		want   float64
		wantOK bool
	}{
		{1, 1, true},
		{2.5, 2.5, true},
		{int8(-3), -3, true},
		{uint16(7), 7, true},
		{int32(8), 8, true},
		{uint(9), 9, true},
		{"12", 0, false},
		{true, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := Number(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestNumberOrText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     any
		want   float64
		wantOK bool
	}{
		{12, 12, true},
		{"12", 12, true},
		{" 3.5 ", 3.5, true},
		{"-1e3", -1000, true},
		{"", 0, false},
		{"   ", 0, false},
		{"abc", 0, false},
		{"12abc", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"-Infinity", 0, false},
		{"1e400", 0, false},
		{true, 0, false},
		{nil, 0, false},
		{[]any{1}, 0, false},
	}
	for _, tt := range tests {
		got, ok := NumberOrText(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("NumberOrText(%#v) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestBlank(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want bool
	}{
		{nil, true},
		{"", true},
		{" \t\n", true},
		{"x", false},
		{0, false},
		{false, false},
		{[]any{}, false},
		{map[string]any{}, false},
	}
	for _, tt := range tests {
		if got := Blank(tt.in); got != tt.want {
			t.Errorf("Blank(%#v) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

type (
	color string
	flag  bool
)

type point struct {
	X      int    `json:"x"`
	Label  string `json:"label,omitempty"`
	hidden int
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("X", 3600))
	name := "n"
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "s", "s"},
		{"bool", true, true},
		{"int", 3, 3},
		{"float", 2.5, 2.5},
		{"whole float stays float", 2.0, 2.0},
		{"int64", int64(5), 5},
		{"int64 beyond 2^53", int64(1<<60 + 1), 1<<60 + 1},
		{"uint8", uint8(7), 7},
		{"uint64 beyond int", uint64(1 << 63), float64(1 << 63)},
		{"float32", float32(1.5), 1.5},
		{"float32 whole", float32(2), 2.0},
		{"json.Number int", json.Number("12"), 12},
		{"json.Number float", json.Number("1.25"), 1.25},
		{"typed slice", []string{"a", "b"}, []any{"a", "b"}},
		{"int slice", []int{1, 2}, []any{1, 2}},
		{"array", [2]bool{true, false}, []any{true, false}},
		{"nil slice", []string(nil), nil},
		{"typed map", map[string]int{"a": 1}, map[string]any{"a": 1}},
		{"nil map", map[string]int(nil), nil},
		{"nested any", []any{int64(1), map[string]any{"t": []int{2}}}, []any{1, map[string]any{"t": []any{2}}}},
		{"map of any", map[string]any{"a": int32(4)}, map[string]any{"a": 4}},
		{"time", when, "2026-01-02T02:04:05.0000006Z"},
		{"duration", 90 * time.Second, "1m30s"},
		{"struct", point{X: 1, hidden: 9}, map[string]any{"x": 1}},
		{"struct pointer", &point{X: 2, Label: "p"}, map[string]any{"x": 2, "label": "p"}},
		{"nil pointer", (*point)(nil), nil},
		{"string pointer", &name, "n"},
		{"named string", color("red"), "red"},
		{"named bool", flag(true), true},
		{"non-string keys", map[int]string{1: "a"}, map[string]any{"1": "a"}},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if err != nil {
			t.Errorf("Normalize(%s) error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Normalize(%s %#v) = %#v (%T); want %#v (%T)", tt.name, tt.in, got, got, tt.want, tt.want)
		}
	}
}

func TestNormalizeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
	}{
		{"NaN", math.NaN()},
		{"+Inf", math.Inf(1)},
		{"-Inf", math.Inf(-1)},
		{"float32 Inf", float32(math.Inf(1))},
		{"NaN in a slice", []any{1, math.NaN()}},
		{"Inf in a map", map[string]any{"a": math.Inf(1)}},
		{"NaN in a typed slice", []float64{math.NaN()}},
		{"func", func() {}},
		{"chan", make(chan int)},
		{"func in a map", map[string]any{"f": func() {}}},
	}
	for _, tt := range tests {
		if got, err := Normalize(tt.in); err == nil {
			t.Errorf("Normalize(%s) = %#v; want an error", tt.name, got)
		}
	}
}

// TestNormalizeKeepsInput checks that Normalize does not change the value it
// is given: values are shared between nodes.
func TestNormalizeKeepsInput(t *testing.T) {
	t.Parallel()
	in := map[string]any{"a": int64(1), "b": []any{int32(2)}}
	if _, err := Normalize(in); err != nil {
		t.Fatalf("Normalize error: %v", err)
	}
	want := map[string]any{"a": int64(1), "b": []any{int32(2)}}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("Normalize changed its input to %#v; want %#v", in, want)
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{map[string]any{"b": 1, "a": "x"}, `{"a":"x","b":1}`},
		{[]any{1.5, true}, "[1.5,true]"},
		{math.NaN(), "null"},
		{[]any{math.Inf(1)}, "null"},
		{"<a href='x'>&</a>", `"<a href='x'>&</a>"`},
	}
	for _, tt := range tests {
		if got := string(Encode(tt.in)); got != tt.want {
			t.Errorf("Encode(%#v) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b any
		want bool
	}{
		{nil, nil, true},
		{nil, false, false},
		{nil, "", false},
		{1, 1.0, true},
		{1, int64(1), true},
		{1, 2, false},
		{1, "1", false},
		{"1", 1, false},
		{"a", "a", true},
		{"a", "A", false},
		{true, true, true},
		{true, 1, false},
		{[]any{1, "a"}, []any{1.0, "a"}, true},
		{[]any{1, "a"}, []any{"a", 1}, false},
		{[]any{1}, []any{1, 1}, false},
		{[]any{}, map[string]any{}, false},
		{map[string]any{"a": 1, "b": []any{nil}}, map[string]any{"b": []any{nil}, "a": 1.0}, true},
		{map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{map[string]any{}, nil, false},
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(tt.b, tt.a); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v; want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	small := Size(map[string]any{"a": "x"})
	big := Size(map[string]any{"a": strings.Repeat("x", 1000)})
	if big-small != 999 {
		t.Errorf("Size grows by %d for 999 more bytes of text; want 999", big-small)
	}
	if got := Size(nil); got != 0 {
		t.Errorf("Size(nil) = %d; want 0", got)
	}
	if a, b := Size([]any{1, 2}), Size([]any{1}); a <= b {
		t.Errorf("Size of 2 items = %d, of 1 item = %d; want it larger", a, b)
	}
}
