package logic

import (
	"context"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(StopSpec()) }

// StopSpec is the Stop node: it ends its branch (and, in a loop body, the
// loop after the current iteration). It has no output.
func StopSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "stop",
		DisplayName: "Stop",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Ends the branch; inside a loop body, ends the loop after the current iteration.",
		Fields: []node.Field{
			{Name: "reason", Kind: node.KindText, Description: "logged when the node runs"},
		},
		Inputs:  []node.Port{node.InPort},
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &Stop{Reason: c.Value("reason")}, nil
		},
	}
}

// Stop is a configured Stop node.
type Stop struct{ Reason any }

// Run logs the reason and ends the branch.
func (s *Stop) Run(_ context.Context, env node.Env) (node.Result, error) {
	msg := "branch stopped"
	if !value.Blank(s.Reason) {
		msg += ": " + value.Text(s.Reason)
	}
	env.Logger().Info(msg)
	return node.Result{Stop: true}, nil
}
