package data

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestOutputSpec(t *testing.T) {
	t.Parallel()
	s := OutputSpec()
	if s.TypeID != "output" || s.Category != node.CategoryUtility || !s.Result {
		t.Errorf("OutputSpec() = %q in %q result %v; want output in utility, a Result node", s.TypeID, s.Category, s.Result)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("output"); !ok {
		t.Errorf("output is not registered")
	}
}

func TestOutputRun(t *testing.T) {
	t.Parallel()
	in := map[string]any{"user": map[string]any{"name": "Ada", "langs": []any{"go", "ml"}}}
	src := map[string]any{"total": 3, "rows": []any{1, 2, 3}}
	tests := []struct {
		name string
		raw  map[string]any
		want map[string]any
	}{
		{"defaults: whole input, label Result", nil,
			map[string]any{"value": in, "label": "Result", "type": "object", "output_type": "value"}},
		{"blank label", map[string]any{"label": " "},
			map[string]any{"value": in, "label": "Result", "type": "object", "output_type": "value"}},
		{"custom label", map[string]any{"label": "Answer"},
			map[string]any{"value": in, "label": "Answer", "type": "object", "output_type": "value"}},
		{"field path", map[string]any{"field": "user.name"},
			map[string]any{"value": "Ada", "label": "Result", "type": "string", "output_type": "value"}},
		{"field path with index", map[string]any{"field": "user.langs.1"},
			map[string]any{"value": "ml", "label": "Result", "type": "string", "output_type": "value"}},
		{"missing field is null", map[string]any{"field": "user.age"},
			map[string]any{"value": nil, "label": "Result", "type": "null", "output_type": "value"}},
		{"source_node instead of input", map[string]any{"source_node": "src"},
			map[string]any{"value": src, "label": "Result", "type": "object", "output_type": "value"}},
		{"source_node by name", map[string]any{"source_node": "Source"},
			map[string]any{"value": src, "label": "Result", "type": "object", "output_type": "value"}},
		{"source_node and field", map[string]any{"source_node": "src", "field": "total"},
			map[string]any{"value": 3, "label": "Result", "type": "number", "output_type": "value"}},
		{"source_node array field", map[string]any{"source_node": "src", "field": "rows"},
			map[string]any{"value": []any{1, 2, 3}, "label": "Result", "type": "array", "output_type": "value"}},
	}
	for _, tt := range tests {
		env := srcEnv(in, src)
		env.Names = map[string]string{"Source": "src"}
		res, err := nodetest.Run(t.Context(), OutputSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Output, tt.want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, tt.want)
		}
	}
}

func TestOutputTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       any
		wantType string
	}{
		{"text", "string"},
		{"", "string"},
		{7, "number"},
		{2.5, "number"},
		{true, "boolean"},
		{false, "boolean"},
		{map[string]any{"a": 1}, "object"},
		{map[string]any{}, "object"},
		{[]any{1}, "array"},
		{[]any{}, "array"},
		{nil, "null"},
	}
	for _, tt := range tests {
		res, err := nodetest.Run(t.Context(), OutputSpec(), nil, nodetest.New(tt.in))
		if err != nil {
			t.Errorf("Run(%#v) error: %v", tt.in, err)
			continue
		}
		out := res.Output.(map[string]any)
		if out["type"] != tt.wantType || !reflect.DeepEqual(out["value"], tt.in) {
			t.Errorf("Run(%#v) type %v value %#v; want %q and the input", tt.in, out["type"], out["value"], tt.wantType)
		}
	}
}

func TestOutputMedia(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"media payload", map[string]any{"files": []any{map[string]any{"name": "a", "data": "QQ=="}}}, "media_batch"},
		{"several files", map[string]any{"files": []any{
			map[string]any{"name": "a.png", "data": "QQ==", "mime_type": "image/png"},
			map[string]any{"name": "b.png", "data": "Qg=="},
		}, "count": 2}, "media_batch"},
		{"no files", map[string]any{"files": []any{}}, "value"},
		{"files not an array", map[string]any{"files": "a.png"}, "value"},
		{"file without data", map[string]any{"files": []any{map[string]any{"name": "a"}}}, "value"},
		{"file data not text", map[string]any{"files": []any{map[string]any{"name": "a", "data": 5}}}, "value"},
		{"one file not an object", map[string]any{"files": []any{map[string]any{"data": "QQ=="}, "b"}}, "value"},
		{"plain object", map[string]any{"name": "a"}, "value"},
		{"array of files", []any{map[string]any{"name": "a", "data": "QQ=="}}, "value"},
		{"text", "QQ==", "value"},
	}
	for _, tt := range tests {
		res, err := nodetest.Run(t.Context(), OutputSpec(), nil, nodetest.New(tt.in))
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if got := res.Output.(map[string]any)["output_type"]; got != tt.want {
			t.Errorf("%s: output_type = %v; want %q", tt.name, got, tt.want)
		}
	}
	// The media check also applies to a picked field.
	in := map[string]any{"result": map[string]any{"files": []any{map[string]any{"name": "a", "data": "QQ=="}}}}
	res, err := nodetest.Run(t.Context(), OutputSpec(), map[string]any{"field": "result"}, nodetest.New(in))
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got := res.Output.(map[string]any)["output_type"]; got != "media_batch" {
		t.Errorf("field result: output_type = %v; want media_batch", got)
	}
}

func TestOutputSourceNotFound(t *testing.T) {
	t.Parallel()
	_, err := nodetest.Run(t.Context(), OutputSpec(), map[string]any{"source_node": "ghost"}, nodetest.New("in"))
	nodetest.WantError(t, "unknown source", err, node.CodeSourceNotFound, "")
}
