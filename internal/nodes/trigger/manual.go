// Package trigger holds the trigger nodes that start a workflow: Manual
// Trigger, Webhook and Schedule. The nodes only emit the event that started
// the run; package scheduler binds the listeners and fires the schedules.
package trigger

import (
	"context"

	"github.com/svcrun/svc/internal/node"
)

func init() { node.Register(ManualSpec()) }

// ManualSpec is the Manual Trigger: it starts a run on demand and emits
// mock_payload (or {}), or the payload the run was started with.
func ManualSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "manual_trigger",
		DisplayName: "Manual Trigger",
		Category:    node.CategoryTrigger,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Starts the workflow when it is run on demand; emits mock_payload, or {}.",
		Fields: []node.Field{
			{Name: "mock_payload", Kind: node.KindJSON, Description: "JSON (an object, or text holding JSON) emitted as the output on a manual run"},
		},
		Outputs: []node.Port{{ID: "start", Label: "Start"}},
		Output:  map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "description": "mock_payload, the run's payload, or {}"},
		Trigger: true,
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return NewManual(c.Value("mock_payload")), nil
		},
	}
}

// Manual is a configured Manual Trigger.
type Manual struct{ payload any }

// NewManual returns a Manual Trigger emitting payload (nil means {}).
func NewManual(payload any) *Manual { return &Manual{payload: payload} }

// Run emits the run's payload when it has one (a parent Execute Workflow's
// input), else mock_payload, else an empty object.
func (m *Manual) Run(_ context.Context, env node.Env) (node.Result, error) {
	if p, ok := env.Payload(); ok {
		return node.Result{Output: p}, nil
	}
	if m.payload == nil {
		return node.Result{Output: map[string]any{}}, nil
	}
	return node.Result{Output: m.payload}, nil
}
