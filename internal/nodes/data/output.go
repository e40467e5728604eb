package data

import (
	"context"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(OutputSpec()) }

// OutputSpec is the Output node: it shows a value as a result of the
// workflow (the chat panel and the widget read it).
func OutputSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "output",
		DisplayName: "Output",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Shows a value as a result of the workflow.",
		Fields: []node.Field{
			{Name: "label", Kind: node.KindText, Default: "Result"},
			{Name: "source_node", Kind: node.KindText, Description: "id (or unique name) of the node to show; blank uses the node wired in"},
			{Name: "field", Kind: node.KindText, Description: "dot path into the value; blank shows everything"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output: node.Object(map[string]any{
			"value":       node.T(""),
			"label":       node.T("string"),
			"type":        map[string]any{"enum": []any{"string", "number", "boolean", "object", "array", "null"}},
			"output_type": map[string]any{"enum": []any{"value", "media_batch"}},
		}),
		Enabled: true,
		Result:  true,
		New: func(c node.Config) (node.Runner, error) {
			return &Output{Label: c.String("label"), Source: c.String("source_node"), Field: c.String("field")}, nil
		},
	}
}

// Output is a configured Output node.
type Output struct{ Label, Source, Field string }

// Run picks the value.
func (o *Output) Run(_ context.Context, env node.Env) (node.Result, error) {
	v := env.Input()
	if o.Source != "" {
		var err error
		if v, _, err = env.Source(o.Source); err != nil {
			return node.Result{}, err
		}
	}
	v, _ = value.Lookup(v, o.Field)
	kind := "value"
	if IsMedia(v) {
		kind = "media_batch"
	}
	return node.Result{Output: map[string]any{"value": v, "label": o.Label, "type": value.TypeName(v), "output_type": kind}}, nil
}

// IsMedia reports whether v is a media payload: an object whose files array
// is not empty and holds objects with text data.
func IsMedia(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	files, ok := m["files"].([]any)
	if !ok || len(files) == 0 {
		return false
	}
	for _, f := range files {
		fm, ok := f.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := fm["data"].(string); !ok {
			return false
		}
	}
	return true
}
