// Package data holds the nodes that shape data: Transform Data, JSON, Set
// Variable, Get Variable and Output.
package data

import (
	"context"
	"fmt"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(TransformSpec()) }

// TransformSpec is the Transform Data node: each mapping copies the value an
// RFC 6901 pointer finds in a source node's output to a key of its own
// output.
func TransformSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "transform_data",
		DisplayName: "Transform Data",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Builds an object from values picked out of a source node's output with JSON pointers.",
		Fields: []node.Field{
			{Name: "source_node", Kind: node.KindText, Required: true, Description: "id (or unique name) of the node whose output is read"},
			{Name: "mappings", Kind: node.KindJSON, Description: `JSON array of {"from": "/json/pointer", "to": "key"}; "/" addresses the key named ""; "$" copies the whole output; a blank from is skipped`,
				Schema: map[string]any{"examples": []any{[]any{map[string]any{"from": "/user/name", "to": "name"}}}}},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output:  node.Object(map[string]any{}),
		Enabled: true,
		New:     newTransform,
	}
}

// Mapping is one Transform Data mapping. Whole marks "$".
type Mapping struct {
	From  value.Pointer
	Whole bool
	To    string
}

// Transform is a configured Transform Data node.
type Transform struct {
	Source   string
	Mappings []Mapping
}

func newTransform(c node.Config) (node.Runner, error) {
	t := &Transform{Source: c.String("source_node")}
	raw := c.Value("mappings")
	if raw == nil {
		return t, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, node.ConfigError("mappings", "must be a JSON array of mappings")
	}
	for i, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, node.ConfigError(fmt.Sprintf("mappings[%d]", i), "must be an object with from and to")
		}
		from, isStr := obj["from"].(string)
		if obj["from"] != nil && !isStr {
			return nil, node.ConfigError(fmt.Sprintf("mappings[%d].from", i), "must be text")
		}
		if value.Blank(from) {
			continue
		}
		to, isStr := obj["to"].(string)
		if obj["to"] != nil && !isStr {
			return nil, node.ConfigError(fmt.Sprintf("mappings[%d].to", i), "must be text")
		}
		m := Mapping{To: to}
		if from == "$" {
			m.Whole = true
		} else {
			p, err := value.ParsePointer(from)
			if err != nil {
				return nil, node.ConfigError(fmt.Sprintf("mappings[%d].from", i), "is not a JSON pointer (%v)", err)
			}
			m.From = p
		}
		if m.To == "" {
			if m.Whole || len(m.From) == 0 {
				return nil, node.ConfigError(fmt.Sprintf("mappings[%d].to", i), "is required when from copies the whole output")
			}
			m.To = m.From[len(m.From)-1]
			if m.To == "" {
				return nil, node.ConfigError(fmt.Sprintf("mappings[%d].to", i), "is required when from ends in the empty key")
			}
		}
		t.Mappings = append(t.Mappings, m)
	}
	return t, nil
}

// Run builds the output. A pointer that finds nothing gives null.
func (t *Transform) Run(_ context.Context, env node.Env) (node.Result, error) {
	src, _, err := env.Source(t.Source)
	if err != nil {
		return node.Result{}, err
	}
	out := make(map[string]any, len(t.Mappings))
	for _, m := range t.Mappings {
		if m.Whole {
			out[m.To] = src
			continue
		}
		v, _ := m.From.Get(src)
		out[m.To] = v
	}
	return node.Result{Output: out}, nil
}
