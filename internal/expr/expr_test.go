package expr

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func testEnv() *Env {
	return &Env{
		Vars:  map[string]any{"region": "eu", "n": 3, "flag": true},
		Run:   map[string]any{"id": "r1", "workflow_id": "w1", "trigger": "manual", "started_at": "2026-01-02T03:04:05Z"},
		Input: map[string]any{"items": []any{1, 2, 3}, "name": "Ada", "nested": map[string]any{"x": 1.5}},
		Node:  map[string]any{"fetch": map[string]any{"status": 200, "body": "ok"}},
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want any
	}{
		{"plain text", "plain text"},
		{"{{ $vars.region }}", "eu"},
		{"{{ $vars.n }}", 3},
		{"{{$vars.n * 2}}", 6},
		{"  {{ $vars.flag }}  ", true},
		{"{{ $input.items }}", []any{1, 2, 3}},
		{"{{ $input.nested }}", map[string]any{"x": 1.5}},
		{"{{ $node.fetch.status }}", 200},
		{"{{ $node.missing }}", nil},
		{"{{ $node.missing?.body }}", nil},
		{"{{ $run.workflow_id }}/{{ $run.trigger }}", "w1/manual"},
		{"n={{ $vars.n }}, items={{ $input.items }}, none={{ $node.missing }}", "n=3, items=[1,2,3], none="},
		{"{{ $input.nested.x }} and {{ 1e21 }}", "1.5 and 1e+21"},
		{`{{ "}}" }}`, "}}"},
		{`{{ '{{' + "x" }}`, "{{x"},
		{"{{ upper($input.name) }}", "ADA"},
		{"{{ len($input.items) > 2 ? 'many' : 'few' }}", "many"},
		{"{{ $input.items[1] }}", 2},
		{"a {{ $vars.region }} b {{ $vars.n }} c", "a eu b 3 c"},
	}
	for _, tt := range tests {
		tmpl, err := Compile(tt.src)
		if err != nil {
			t.Errorf("Compile(%q) error: %v", tt.src, err)
			continue
		}
		got, err := tmpl.Eval(testEnv())
		if err != nil {
			t.Errorf("Eval(%q) error: %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Eval(%q) = %#v; want %#v", tt.src, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	runtime := []string{
		"{{ $node.missing.body }}",
		"{{ $input.name.x }}",
		"{{ 1/0 }}",
		"{{ $input.items[10] }}",
	}
	for _, src := range runtime {
		tmpl, err := Compile(src)
		if err != nil {
			t.Errorf("Compile(%q) error: %v; want a runtime error", src, err)
			continue
		}
		if got, err := tmpl.Eval(testEnv()); err == nil {
			t.Errorf("Eval(%q) = %v; want an error", src, got)
		}
	}
	syntax := []string{"{{ $vars.", "{{ }}", "{{ 1 + }}", "{{ unknownFunc(1) }}", "text {{ (", "{{ $nope }}"}
	for _, src := range syntax {
		if _, err := Compile(src); err == nil || !IsSyntax(err) {
			t.Errorf("Compile(%q) error = %v; want a syntax error", src, err)
		}
	}
}

func TestEnvAsValue(t *testing.T) {
	t.Parallel()
	tmpl, err := Compile("{{ $env }}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Eval(testEnv())
	if err != nil {
		t.Fatal(err)
	}
	m, ok := got.(map[string]any)
	if !ok || m["$vars"] == nil || m["$node"] == nil {
		t.Errorf("Eval($env) = %#v; want a map of the four names", got)
	}
}

func TestCacheBounded(t *testing.T) {
	t.Parallel()
	c := NewCache(10)
	for i := range 25 {
		if _, err := c.Compile("{{ " + strings.Repeat("1+", i) + "1 }}"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > 10 {
		t.Errorf("cache holds %d templates; want at most 10", n)
	}
	a, _ := c.Compile("{{ 2 }}")
	b, _ := c.Compile("{{ 2 }}")
	if a != b {
		t.Errorf("Compile twice gave two templates; want the cached one")
	}
	_, err1 := c.Compile("{{ ( }}")
	_, err2 := c.Compile("{{ ( }}")
	if err1 == nil || err1 != err2 {
		t.Errorf("a failing template is not cached with its error: %v, %v", err1, err2)
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		src              string
		static, usesNode bool
	}{
		{"no braces", true, false},
		{"{{ $node.a }}", false, true},
		{"{{ $env }}", false, true},
		{"{{ $vars.a }}", false, false},
	} {
		tmpl, err := Compile(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if tmpl.Static() != tt.static || tmpl.UsesNode() != tt.usesNode {
			t.Errorf("Compile(%q): Static %v UsesNode %v; want %v %v", tt.src, tmpl.Static(), tmpl.UsesNode(), tt.static, tt.usesNode)
		}
	}
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"{{ $vars.n * 2 }}", "a {{ $input.items }} b", `{{ "}}" }}`, "{{", "}}", "{{ $node.fetch?.body ?? 'x' }}", "{{ map($input.items, # * 2) }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Compile(src)
		if err != nil {
			return
		}
		// Evaluating never panics; a value, if any, encodes as JSON.
		v, err := tmpl.Eval(testEnv())
		if err == nil {
			if _, jerr := json.Marshal(v); jerr != nil {
				t.Fatalf("Eval(%q) = %#v, not a JSON value: %v", src, v, jerr)
			}
		}
	})
}
