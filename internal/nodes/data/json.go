package data

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(JSONSpec()) }

// Codes of the JSON node.
const (
	CodeInvalidJSON = "INVALID_JSON"
	CodeNotAnObject = "NOT_AN_OBJECT"
)

// JSONSpec is the JSON node: parse, stringify, extract with a pointer, merge
// objects, or take an element of an array.
func JSONSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "json",
		DisplayName: "JSON",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Parses, stringifies, extracts from, merges or indexes JSON.",
		Fields: []node.Field{
			{Name: "operation", Kind: node.KindEnum, Enum: []string{"parse", "stringify", "extract", "merge", "array_get"}, Default: "parse"},
			{Name: "input_text", Kind: node.KindText, Description: "the data: JSON text or {{ expression }}; parse reads only this; the others read it when set, else the source"},
			{Name: "pointer", Kind: node.KindText, Description: "extract and array_get: RFC 6901 pointer into the data"},
			{Name: "index", Kind: node.KindInteger, Default: 0, Description: "array_get: element index; negative counts from the end"},
			{Name: "source_node", Kind: node.KindText, Description: "id (or unique name) of the node whose output is the data; blank reads every node's output (deprecated)"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output:  node.Object(map[string]any{"result": node.T("")}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			j := &JSON{Op: c.String("operation"), Input: c.Value("input_text"), Index: c.Int("index"), Source: c.String("source_node")}
			if ptr := c.String("pointer"); ptr != "" && j.Op != "parse" {
				p, err := value.ParsePointer(ptr)
				if err != nil {
					return nil, node.ConfigError("pointer", "is not a JSON pointer (%v)", err)
				}
				j.Pointer = p
			}
			if j.Op == "parse" && value.Blank(j.Input) {
				return nil, node.ConfigError("input_text", "is required for parse")
			}
			return j, nil
		},
	}
}

// JSON is a configured JSON node.
type JSON struct {
	Op      string
	Input   any
	Pointer value.Pointer
	Index   int
	Source  string
}

// Run applies the operation.
func (j *JSON) Run(_ context.Context, env node.Env) (node.Result, error) {
	if j.Op == "parse" {
		v, err := parse(j.Input)
		if err != nil {
			return node.Result{}, err
		}
		return result(v), nil
	}
	data, err := j.data(env)
	if err != nil {
		return node.Result{}, err
	}
	switch j.Op {
	case "stringify":
		return result(string(value.Encode(data))), nil
	case "extract":
		v, found := j.Pointer.Get(data)
		if !found {
			env.Logger().Info("extract: the pointer matches nothing; the result is null")
		}
		return result(v), nil
	case "merge":
		return j.merge(data)
	case "array_get":
		v, _ := j.Pointer.Get(data)
		arr, ok := v.([]any)
		if !ok {
			return node.Result{}, node.Errorf(node.CodeNotAnArray, "array_get: the data holds %s, not an array", value.TypeName(v))
		}
		i := j.Index
		if i < 0 {
			i += len(arr)
		}
		if i < 0 || i >= len(arr) {
			env.Logger().Info(fmt.Sprintf("array_get: index %d is outside the array of %d; the result is null", j.Index, len(arr)))
			return result(nil), nil
		}
		return result(arr[i]), nil
	}
	return node.Result{}, node.ConfigError("operation", "is not supported")
}

func result(v any) node.Result { return node.Result{Output: map[string]any{"result": v}} }

// parse reads JSON text; a value that is already structured (from an
// expression) is taken as it is.
func parse(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	out, err := value.DecodeString(s)
	if err != nil {
		return nil, node.FieldError(CodeInvalidJSON, "input_text", "is not valid JSON: %v", err)
	}
	return out, nil
}

// data is what the operation works on: input_text when set (text holding
// JSON is parsed), else the source node's output, else every output.
func (j *JSON) data(env node.Env) (any, error) {
	if !value.Blank(j.Input) {
		if s, ok := j.Input.(string); ok {
			if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
				return parse(s)
			}
		}
		return j.Input, nil
	}
	if j.Source == "" {
		env.Logger().Warn("source_node is blank: reading every node's output is deprecated; name a source node")
		return env.Outputs(), nil
	}
	v, _, err := env.Source(j.Source)
	return v, err
}

// merge combines objects into one: the data itself when it is an object,
// or its elements, later keys winning, when it is an array of objects (a
// Merge node's array output, say).
func (j *JSON) merge(data any) (node.Result, error) {
	out := map[string]any{}
	add := func(v any) error {
		switch t := v.(type) {
		case map[string]any:
			maps.Copy(out, t)
		case []any:
			for i, e := range t {
				m, ok := e.(map[string]any)
				if !ok {
					return node.Errorf(CodeNotAnObject, "merge: element %d is %s, not an object", i, value.TypeName(e))
				}
				maps.Copy(out, m)
			}
		case nil:
		default:
			return node.Errorf(CodeNotAnObject, "merge: the data is %s, not an object", value.TypeName(v))
		}
		return nil
	}
	if err := add(data); err != nil {
		return node.Result{}, err
	}
	return result(out), nil
}
