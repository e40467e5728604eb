package logic

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestMergeSpec(t *testing.T) {
	t.Parallel()
	s := MergeSpec()
	if s.TypeID != "merge" || s.Category != node.CategoryLogic {
		t.Errorf("MergeSpec() = %q in %q; want merge in logic", s.TypeID, s.Category)
	}
	if want := []node.Port{{ID: "in", Label: "In", Arity: node.ArityMany}}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("merge"); !ok {
		t.Errorf("merge is not registered")
	}
}

func TestMergeRun(t *testing.T) {
	t.Parallel()
	ins := []node.Input{
		{From: "b", FromPort: "out", Port: "in", Value: map[string]any{"n": 2}},
		{From: "a", FromPort: "true", Port: "in", Value: "first"},
		{From: "c", FromPort: "out", Port: "in", Value: nil},
	}
	tests := []struct {
		name string
		raw  map[string]any
		ins  []node.Input
		want any
	}{
		{"object by default", nil, ins, map[string]any{"b": map[string]any{"n": 2}, "a": "first", "c": nil}},
		{"object", map[string]any{"mode": "object"}, ins, map[string]any{"b": map[string]any{"n": 2}, "a": "first", "c": nil}},
		{"array in Inputs order", map[string]any{"mode": "array"}, ins, []any{map[string]any{"n": 2}, "first", nil}},
		{"one input object", nil, ins[1:2], map[string]any{"a": "first"}},
		{"empty object", map[string]any{"mode": "object"}, nil, map[string]any{}},
		{"empty array", map[string]any{"mode": "array"}, nil, []any{}},
		{"empty object from an empty list", nil, []node.Input{}, map[string]any{}},
	}
	for _, tt := range tests {
		env := nodetest.New("last")
		env.Ins = tt.ins
		res, err := nodetest.Run(t.Context(), MergeSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Output, tt.want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, tt.want)
		}
	}
}

func TestMergeBadMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []any{"list", "Array", 1} {
		_, err := nodetest.Build(MergeSpec(), map[string]any{"mode": mode})
		nodetest.WantError(t, "mode", err, node.CodeInvalidConfig, "mode")
	}
}
