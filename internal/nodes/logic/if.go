// Package logic holds the nodes that steer a run: If, Switch, Loop, Stop,
// Merge and Execute Workflow.
package logic

import (
	"context"
	"strings"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(IfSpec()) }

// The If operators.
var ifOps = []string{"==", "!=", ">", ">=", "<", "<=", "contains"}

// IfSpec is the If node: it compares lhs with rhs (or tests condition) and
// passes its input on through True or False.
func IfSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "if",
		DisplayName: "If",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Routes its input to True or False by comparing two values or testing a condition.",
		Fields: []node.Field{
			{Name: "lhs", Kind: node.KindText, Description: "left-hand value"},
			{Name: "op", Kind: node.KindEnum, Enum: ifOps, Default: "==", Description: "comparison; two numbers compare as numbers, anything else as text ignoring case"},
			{Name: "rhs", Kind: node.KindText, Description: "right-hand value"},
			{Name: "condition", Kind: node.KindText, Description: "single test used when lhs and rhs are both blank, usually {{ expression }}; must come out true or false"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{{ID: "true", Label: "True"}, {ID: "false", Label: "False"}},
		Output:  map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "description": "the node's input, unchanged"},
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			if c.Blank("lhs") && c.Blank("rhs") {
				return &If{Condition: c.Value("condition"), UseCondition: true}, nil
			}
			return &If{LHS: c.Value("lhs"), Op: c.String("op"), RHS: c.Value("rhs")}, nil
		},
	}
}

// If is a configured If node.
type If struct {
	LHS, RHS     any
	Op           string
	Condition    any
	UseCondition bool
}

// Run decides and passes the input on.
func (n *If) Run(_ context.Context, env node.Env) (node.Result, error) {
	var ok bool
	if n.UseCondition {
		if value.Blank(n.Condition) {
			env.Logger().Info("the If node has no condition; it evaluates as false")
		} else {
			var err error
			if ok, err = truth(n.Condition); err != nil {
				return node.Result{}, err
			}
		}
	} else {
		ok = Compare(n.LHS, n.Op, n.RHS)
	}
	port := "false"
	if ok {
		port = "true"
	}
	return node.Result{Output: env.Input(), Port: port}, nil
}

// truth reads a condition's value as true or false.
func truth(v any) (bool, error) {
	switch t := v.(type) {
	case bool:
		return t, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
		return false, node.ConfigError("condition", "does not come out true or false; write the test as {{ expression }}")
	}
	if f, ok := value.Number(v); ok {
		return f != 0, nil
	}
	return false, node.ConfigError("condition", "comes out as %s, not true or false", value.TypeName(v))
}

// Compare applies an If operator. Two numbers (or texts that read as
// numbers) compare as numbers; anything else compares as text ignoring case.
// contains looks for an element in an array, else for text in text.
func Compare(lhs any, op string, rhs any) bool {
	if op == "contains" {
		if arr, ok := lhs.([]any); ok {
			for _, e := range arr {
				if Compare(e, "==", rhs) {
					return true
				}
			}
			return false
		}
		return strings.Contains(strings.ToLower(value.Text(lhs)), strings.ToLower(value.Text(rhs)))
	}
	var c int
	a, aNum := value.NumberOrText(lhs)
	b, bNum := value.NumberOrText(rhs)
	if aNum && bNum {
		switch {
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
	} else {
		c = strings.Compare(strings.ToLower(value.Text(lhs)), strings.ToLower(value.Text(rhs)))
	}
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}
