package data

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestTransformSpec(t *testing.T) {
	t.Parallel()
	s := TransformSpec()
	if s.TypeID != "transform_data" || s.Category != node.CategoryUtility {
		t.Errorf("TransformSpec() = %q in %q; want transform_data in utility", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("transform_data"); !ok {
		t.Errorf("transform_data is not registered")
	}
}

func TestTransformRun(t *testing.T) {
	t.Parallel()
	src := map[string]any{
		"user":  map[string]any{"name": "Ada", "langs": []any{"go", "ml"}},
		"":      "empty key",
		"a/b":   1,
		"m~n":   8,
		"items": []any{map[string]any{"id": 1}, map[string]any{"id": 2}},
		"null":  nil,
	}
	tests := []struct {
		name     string
		mappings any
		want     map[string]any
	}{
		{"pointer", []any{map[string]any{"from": "/user/name", "to": "name"}}, map[string]any{"name": "Ada"}},
		{"array index", []any{map[string]any{"from": "/user/langs/1", "to": "second"}}, map[string]any{"second": "ml"}},
		{"nested in array", []any{map[string]any{"from": "/items/1/id", "to": "id"}}, map[string]any{"id": 2}},
		{"/ reads the key named empty string", []any{map[string]any{"from": "/", "to": "e"}}, map[string]any{"e": "empty key"}},
		{"~1 escape", []any{map[string]any{"from": "/a~1b", "to": "ab"}}, map[string]any{"ab": 1}},
		{"~0 escape", []any{map[string]any{"from": "/m~0n", "to": "mn"}}, map[string]any{"mn": 8}},
		{"$ copies all", []any{map[string]any{"from": "$", "to": "all"}}, map[string]any{"all": src}},
		{"to defaults to the last token", []any{map[string]any{"from": "/user/name"}}, map[string]any{"name": "Ada"}},
		{"to default unescaped", []any{map[string]any{"from": "/a~1b"}}, map[string]any{"a/b": 1}},
		{"to default from an index", []any{map[string]any{"from": "/user/langs/0"}}, map[string]any{"0": "go"}},
		{"blank to defaults too", []any{map[string]any{"from": "/user/name", "to": ""}}, map[string]any{"name": "Ada"}},
		{"blank from skipped", []any{
			map[string]any{"from": "", "to": "skipped"},
			map[string]any{"to": "also_skipped"},
			map[string]any{"from": nil, "to": "null_skipped"},
			map[string]any{"from": "  ", "to": "space_skipped"},
			map[string]any{"from": "/user/name", "to": "n"},
		}, map[string]any{"n": "Ada"}},
		{"missing gives null", []any{map[string]any{"from": "/user/age", "to": "age"}}, map[string]any{"age": nil}},
		{"leading zero index gives null", []any{map[string]any{"from": "/user/langs/01", "to": "x"}}, map[string]any{"x": nil}},
		{"- index gives null", []any{map[string]any{"from": "/user/langs/-", "to": "x"}}, map[string]any{"x": nil}},
		{"null value", []any{map[string]any{"from": "/null", "to": "x"}}, map[string]any{"x": nil}},
		{"several, later key wins", []any{
			map[string]any{"from": "/user/name", "to": "v"},
			map[string]any{"from": "/a~1b", "to": "w"},
			map[string]any{"from": "/m~0n", "to": "v"},
		}, map[string]any{"v": 8, "w": 1}},
		{"mappings as JSON text", `[{"from": "/user/name", "to": "who"}, {"from": "$", "to": "raw"}]`,
			map[string]any{"who": "Ada", "raw": src}},
		{"no mappings", nil, map[string]any{}},
		{"empty mappings text", "[]", map[string]any{}},
	}
	for _, tt := range tests {
		env := srcEnv("input is not read", src)
		res, err := nodetest.Run(t.Context(), TransformSpec(), map[string]any{"source_node": "src", "mappings": tt.mappings}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Output, tt.want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, tt.want)
		}
	}
}

func TestTransformScalarSource(t *testing.T) {
	t.Parallel()
	env := srcEnv(nil, "just text")
	res, err := nodetest.Run(t.Context(), TransformSpec(), map[string]any{"source_node": "src",
		"mappings": `[{"from": "$", "to": "all"}, {"from": "/x", "to": "x"}]`}, env)
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if want := map[string]any{"all": "just text", "x": nil}; !reflect.DeepEqual(res.Output, want) {
		t.Errorf("Output = %#v; want %#v", res.Output, want)
	}
}

func TestTransformSourceNotFound(t *testing.T) {
	t.Parallel()
	_, err := nodetest.Run(t.Context(), TransformSpec(), map[string]any{"source_node": "ghost",
		"mappings": `[{"from": "/a", "to": "a"}]`}, srcEnv(nil, map[string]any{}))
	nodetest.WantError(t, "unknown source", err, node.CodeSourceNotFound, "")
}

func TestTransformConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mappings any
		field    string
	}{
		{"$ without to", `[{"from": "$"}]`, "mappings[0].to"},
		{"empty last key without to", `[{"from": "/"}]`, "mappings[0].to"},
		{"$ with blank to", []any{map[string]any{"from": "/a", "to": "a"}, map[string]any{"from": "$", "to": ""}}, "mappings[1].to"},
		{"pointer without slash", `[{"from": "user/name", "to": "n"}]`, "mappings[0].from"},
		{"bad escape", `[{"from": "/ok", "to": "a"}, {"from": "/a~2", "to": "b"}]`, "mappings[1].from"},
		{"dangling ~", `[{"from": "/a~", "to": "b"}]`, "mappings[0].from"},
		{"from not text", `[{"from": 5, "to": "b"}]`, "mappings[0].from"},
		{"to not text", `[{"from": "/a", "to": 5}]`, "mappings[0].to"},
		{"mapping not an object", `["/a"]`, "mappings[0]"},
		{"mappings an object", `{"from": "/a", "to": "a"}`, "mappings"},
		{"mappings not JSON", "from=/a", "mappings"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(TransformSpec(), map[string]any{"source_node": "src", "mappings": tt.mappings})
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
	_, err := nodetest.Build(TransformSpec(), map[string]any{"mappings": `[]`})
	nodetest.WantError(t, "source_node required", err, node.CodeInvalidConfig, "source_node")
}
