package data

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestJSONSpec(t *testing.T) {
	t.Parallel()
	s := JSONSpec()
	if s.TypeID != "json" || s.Category != node.CategoryUtility {
		t.Errorf("JSONSpec() = %q in %q; want json in utility", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("json"); !ok {
		t.Errorf("json is not registered")
	}
}

func TestJSONRun(t *testing.T) {
	t.Parallel()
	src := map[string]any{
		"user":  map[string]any{"name": "Ada", "tags": []any{"a", "b", "c"}},
		"":      "empty key",
		"list":  []any{10, 20, 30},
		"parts": []any{map[string]any{"a": 1, "b": 1}, map[string]any{"b": 2}, map[string]any{"c": 3}},
	}
	tests := []struct {
		name string
		raw  map[string]any
		want any
	}{
		// parse
		{"parse object", map[string]any{"operation": "parse", "input_text": `{"a": [1, 2.5, null]}`}, map[string]any{"a": []any{1, 2.5, nil}}},
		{"parse is the default", map[string]any{"input_text": "[true]"}, []any{true}},
		{"parse number", map[string]any{"input_text": "42"}, 42},
		{"parse string", map[string]any{"input_text": `"hi"`}, "hi"},
		{"parse ignores source_node", map[string]any{"input_text": "1", "source_node": "ghost"}, 1},
		{"parse keeps a structured value", map[string]any{"input_text": map[string]any{"k": "v"}}, map[string]any{"k": "v"}},
		// stringify
		{"stringify source", map[string]any{"operation": "stringify", "source_node": "src", "pointer": "/ignored"}, mustEncode(t, src)},
		{"stringify input_text JSON", map[string]any{"operation": "stringify", "input_text": ` {"b": 1, "a": [1]} `}, `{"a":[1],"b":1}`},
		{"stringify input_text plain text", map[string]any{"operation": "stringify", "input_text": "hello"}, `"hello"`},
		{"stringify input_text number", map[string]any{"operation": "stringify", "input_text": 2.5}, "2.5"},
		// extract
		{"extract", map[string]any{"operation": "extract", "source_node": "src", "pointer": "/user/name"}, "Ada"},
		{"extract array element", map[string]any{"operation": "extract", "source_node": "src", "pointer": "/user/tags/2"}, "c"},
		{"extract / reads key empty", map[string]any{"operation": "extract", "source_node": "src", "pointer": "/"}, "empty key"},
		{"extract without pointer is everything", map[string]any{"operation": "extract", "source_node": "src"}, src},
		{"extract missing is null", map[string]any{"operation": "extract", "source_node": "src", "pointer": "/user/age"}, nil},
		{"extract from input_text", map[string]any{"operation": "extract", "input_text": `{"x": {"y": 7}}`, "pointer": "/x/y"}, 7},
		{"input_text wins over source", map[string]any{"operation": "extract", "input_text": `{"user": {"name": "Bob"}}`, "source_node": "src", "pointer": "/user/name"}, "Bob"},
		// merge
		{"merge an object", map[string]any{"operation": "merge", "source_node": "src", "pointer": "/ignored"}, src},
		{"merge an array of objects, later keys win", map[string]any{"operation": "merge", "input_text": `[{"a": 1, "b": 1}, {"b": 2}, {"c": 3}]`},
			map[string]any{"a": 1, "b": 2, "c": 3}},
		{"merge an empty array", map[string]any{"operation": "merge", "input_text": "[]"}, map[string]any{}},
		// array_get
		{"array_get default index 0", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list"}, 10},
		{"array_get index", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": 2}, 30},
		{"array_get index as text", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": "1"}, 20},
		{"array_get -1 is the last", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": -1}, 30},
		{"array_get -3 is the first", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": -3}, 10},
		{"array_get past the end is null", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": 3}, nil},
		{"array_get before the start is null", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/list", "index": -4}, nil},
		{"array_get empty array is null", map[string]any{"operation": "array_get", "input_text": "[]"}, nil},
		{"array_get input_text", map[string]any{"operation": "array_get", "input_text": `["x", "y"]`, "index": 1}, "y"},
		{"array_get source is the array", map[string]any{"operation": "array_get", "source_node": "arr", "index": -1}, "z"},
	}
	for _, tt := range tests {
		env := srcEnv("the input", src)
		env.Outs["arr"] = []any{"x", "z"}
		res, err := nodetest.Run(t.Context(), JSONSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if want := map[string]any{"result": tt.want}; !reflect.DeepEqual(res.Output, want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, want)
		}
		if env.Logged("deprecated") {
			t.Errorf("%s: log = %q; want no deprecation warning with a source or input_text", tt.name, env.Log())
		}
	}
}

func mustEncode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal error: %v", err)
	}
	return string(b)
}

// TestJSONEveryOutput: a blank source_node (and blank input_text) reads
// every node's output, keyed by node id, and logs a deprecation warning.
func TestJSONEveryOutput(t *testing.T) {
	t.Parallel()
	outs := map[string]any{"a": map[string]any{"x": 1}, "b": []any{2}}
	tests := []struct {
		raw  map[string]any
		want any
	}{
		{map[string]any{"operation": "stringify"}, `{"a":{"x":1},"b":[2]}`},
		{map[string]any{"operation": "extract", "pointer": "/a/x"}, 1},
		{map[string]any{"operation": "extract", "pointer": "/b/0", "source_node": " "}, 2},
		{map[string]any{"operation": "array_get", "pointer": "/b"}, 2},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		env.Outs = outs
		res, err := nodetest.Run(t.Context(), JSONSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%v: Run error: %v", tt.raw, err)
			continue
		}
		if want := map[string]any{"result": tt.want}; !reflect.DeepEqual(res.Output, want) {
			t.Errorf("%v: Output = %#v; want %#v", tt.raw, res.Output, want)
		}
		if !env.Logged("level=WARN") || !env.Logged("deprecated") {
			t.Errorf("%v: log = %q; want a deprecation warning", tt.raw, env.Log())
		}
	}
}

func TestJSONErrors(t *testing.T) {
	t.Parallel()
	src := map[string]any{"obj": map[string]any{"a": 1}, "list": []any{1, "x"}, "text": "t"}
	tests := []struct {
		name  string
		raw   map[string]any
		code  string
		field string
	}{
		{"parse invalid", map[string]any{"operation": "parse", "input_text": "{nope"}, CodeInvalidJSON, "input_text"},
		{"parse trailing data", map[string]any{"operation": "parse", "input_text": `{"a":1} {}`}, CodeInvalidJSON, "input_text"},
		{"parse plain word", map[string]any{"operation": "parse", "input_text": "hello"}, CodeInvalidJSON, "input_text"},
		{"extract broken input_text", map[string]any{"operation": "extract", "input_text": `{"a":`, "pointer": "/a"}, CodeInvalidJSON, "input_text"},
		{"merge broken input_text", map[string]any{"operation": "merge", "input_text": "[{]"}, CodeInvalidJSON, "input_text"},
		{"unknown source", map[string]any{"operation": "extract", "source_node": "ghost", "pointer": "/a"}, node.CodeSourceNotFound, ""},
		{"unknown source stringify", map[string]any{"operation": "stringify", "source_node": "ghost"}, node.CodeSourceNotFound, ""},
		{"array_get on an object", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/obj"}, node.CodeNotAnArray, ""},
		{"array_get on a missing path", map[string]any{"operation": "array_get", "source_node": "src", "pointer": "/nope"}, node.CodeNotAnArray, ""},
		{"merge an array with a non-object", map[string]any{"operation": "merge", "source_node": "src", "input_text": `[{"a":1}, 2]`}, CodeNotAnObject, ""},
		{"merge text", map[string]any{"operation": "merge", "input_text": "plain"}, CodeNotAnObject, ""},
	}
	for _, tt := range tests {
		_, err := nodetest.Run(t.Context(), JSONSpec(), tt.raw, srcEnv(nil, src))
		nodetest.WantError(t, tt.name, err, tt.code, tt.field)
	}
}

// TestJSONMergeKeepsSource: merging copies; the source output, which other
// nodes share, is left as it was.
func TestJSONMergeKeepsSource(t *testing.T) {
	t.Parallel()
	parts := []any{map[string]any{"a": 1}, map[string]any{"b": 2}}
	obj := map[string]any{"c": 3}
	env := srcEnv(nil, parts)
	env.Outs["obj"] = obj
	for _, src := range []string{"src", "obj"} {
		res, err := nodetest.Run(t.Context(), JSONSpec(), map[string]any{"operation": "merge", "source_node": src}, env)
		if err != nil {
			t.Fatalf("merge %s: Run error: %v", src, err)
		}
		res.Output.(map[string]any)["result"].(map[string]any)["z"] = "added"
	}
	if want := []any{map[string]any{"a": 1}, map[string]any{"b": 2}}; !reflect.DeepEqual(parts, want) {
		t.Errorf("source after merge = %#v; want %#v", parts, want)
	}
	if want := map[string]any{"c": 3}; !reflect.DeepEqual(obj, want) {
		t.Errorf("source after merge = %#v; want %#v", obj, want)
	}
}

func TestJSONConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"parse requires input_text", map[string]any{"operation": "parse"}, "input_text"},
		{"parse with blank input_text", map[string]any{"operation": "parse", "input_text": "  ", "source_node": "src"}, "input_text"},
		{"unknown operation", map[string]any{"operation": "flatten", "input_text": "{}"}, "operation"},
		{"bad pointer", map[string]any{"operation": "extract", "pointer": "a/b"}, "pointer"},
		{"bad pointer escape", map[string]any{"operation": "array_get", "pointer": "/a~3"}, "pointer"},
		{"index not a number", map[string]any{"operation": "array_get", "index": "last"}, "index"},
		{"index fractional", map[string]any{"operation": "array_get", "index": 1.5}, "index"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(JSONSpec(), tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
}
