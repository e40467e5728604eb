package logic

import (
	"context"

	"github.com/svcrun/svc/internal/node"
)

func init() { node.Register(MergeSpec()) }

// MergeSpec is the Merge node. Its input accepts any number of wires; it
// runs when every wire that will fire has fired and merges their values.
func MergeSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "merge",
		DisplayName: "Merge",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Waits for every branch wired in that will fire and merges their outputs.",
		Fields: []node.Field{
			{Name: "mode", Kind: node.KindEnum, Enum: []string{"object", "array"}, Default: "object",
				Description: "object: keyed by source node id; array: in completion order"},
		},
		Inputs:  []node.Port{{ID: node.PortIn, Label: "In", Arity: node.ArityMany}},
		Outputs: []node.Port{node.OutPort},
		Output:  map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": []any{"object", "array"}},
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &Merge{Array: c.String("mode") == "array"}, nil
		},
	}
}

// Merge is a configured Merge node.
type Merge struct{ Array bool }

// Run merges the values of the wires that fired, in completion order.
// Skipped, disabled and failed nodes, and nodes not wired in, fire nothing
// and are left out.
func (m *Merge) Run(_ context.Context, env node.Env) (node.Result, error) {
	in := env.Inputs()
	if m.Array {
		out := make([]any, 0, len(in))
		for _, i := range in {
			out = append(out, i.Value)
		}
		return node.Result{Output: out}, nil
	}
	out := make(map[string]any, len(in))
	for _, i := range in {
		out[i.From] = i.Value
	}
	return node.Result{Output: out}, nil
}
