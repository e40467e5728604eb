package logic

import (
	"context"
	"fmt"
	"strconv"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(SwitchSpec()) }

// MaxCases is the number of Switch case ports.
const MaxCases = 8

// SwitchSpec is the Switch node: it reads a field of a source node's output
// and leaves through the port of the first case whose match equals it.
func SwitchSpec() *node.Spec {
	outs := make([]node.Port, 0, MaxCases+1)
	for i := 1; i <= MaxCases; i++ {
		outs = append(outs, node.Port{ID: casePort(i), Label: "Case " + strconv.Itoa(i)})
	}
	outs = append(outs, node.Port{ID: "default", Label: "Default"})
	return &node.Spec{
		TypeID:      "switch",
		DisplayName: "Switch",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Routes its input to the port of the first case matching a field of a source node's output.",
		Fields: []node.Field{
			{Name: "field", Kind: node.KindText, Description: "dot path into the source output (a number indexes an array); blank uses the whole output"},
			{Name: "source_node", Kind: node.KindText, Required: true, Description: "id (or unique name) of the node whose output is read"},
			{Name: "cases", Kind: node.KindJSON, Description: `JSON array of {"match": value, "port": "case_N"}; a case without port gets its position; at most 8`,
				Schema: map[string]any{"examples": []any{[]any{map[string]any{"match": "a", "port": "case_1"}}}}},
			{Name: "default_port", Kind: node.KindText, Default: "default", Description: "port used when no case matches: default or case_1 to case_8"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: outs,
		Output:  map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "description": "the node's input, unchanged"},
		Enabled: true,
		New:     newSwitch,
	}
}

func casePort(i int) string { return "case_" + strconv.Itoa(i) }

func validPort(p string) bool {
	if p == "default" {
		return true
	}
	for i := 1; i <= MaxCases; i++ {
		if p == casePort(i) {
			return true
		}
	}
	return false
}

// Case is one Switch case.
type Case struct {
	Match any
	Port  string
}

// Switch is a configured Switch node.
type Switch struct {
	Field       string
	Source      string
	Cases       []Case
	DefaultPort string
}

func newSwitch(c node.Config) (node.Runner, error) {
	s := &Switch{Field: c.String("field"), Source: c.String("source_node"), DefaultPort: c.String("default_port")}
	if !validPort(s.DefaultPort) {
		return nil, node.ConfigError("default_port", "must be default or case_1 to case_%d", MaxCases)
	}
	raw := c.Value("cases")
	if raw == nil {
		return s, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, node.ConfigError("cases", "must be a JSON array of cases")
	}
	if len(list) > MaxCases {
		return nil, node.ConfigError("cases", "has %d cases; a Switch has at most %d", len(list), MaxCases)
	}
	for i, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, node.ConfigError(fmt.Sprintf("cases[%d]", i), "must be an object with match and port")
		}
		m, ok := obj["match"]
		if !ok {
			return nil, node.ConfigError(fmt.Sprintf("cases[%d].match", i), "is required")
		}
		port := casePort(i + 1)
		if p, present := obj["port"]; present && !value.Blank(p) {
			ps, isStr := p.(string)
			if !isStr || !validPort(ps) || ps == "default" {
				return nil, node.ConfigError(fmt.Sprintf("cases[%d].port", i), "must be case_1 to case_%d", MaxCases)
			}
			port = ps
		}
		s.Cases = append(s.Cases, Case{Match: m, Port: port})
	}
	return s, nil
}

// Run routes the input by the first matching case.
func (s *Switch) Run(_ context.Context, env node.Env) (node.Result, error) {
	src, ran, err := env.Source(s.Source)
	if err != nil {
		return node.Result{}, err
	}
	// A source that has not succeeded in this run has no field to match.
	v, found := value.Lookup(src, s.Field)
	port := s.DefaultPort
	if ran && found {
		for _, c := range s.Cases {
			if Matches(v, c.Match) {
				port = c.Port
				break
			}
		}
	}
	return node.Result{Output: env.Input(), Port: port}, nil
}

// Matches is the Switch match: exact and case-sensitive. Values of the same
// JSON type compare as values; a number or boolean against text compares
// their text ("200" matches 200).
func Matches(v, match any) bool {
	if value.TypeName(v) == value.TypeName(match) {
		return value.Equal(v, match)
	}
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	switch match.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return v != nil && value.Text(v) == value.Text(match)
}
