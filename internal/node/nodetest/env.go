// Package nodetest provides a node.Env for testing a node without an engine:
// a run's state held in plain fields, with a log that tests can read.
package nodetest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/svcrun/svc/internal/node"
)

// Env is a node.Env whose run state is set by the test.
type Env struct {
	Run, Workflow, Node string
	In                  any
	Ins                 []node.Input
	// Outs are the outputs of earlier nodes by id; Names maps node names
	// to ids.
	Outs  map[string]any
	Names map[string]string
	// NotRun lists nodes that exist but have not succeeded in this run:
	// Source reports them without a value and without an error.
	NotRun map[string]bool
	// Wired lists the output ports with a wire.
	Wired      map[string]bool
	Vars       map[string]any
	VarStore   node.VariableStore
	PayloadV   any
	HasPayload bool
	// AdminCaller is what Admin reports.
	AdminCaller bool
	// Child runs a child workflow for RunWorkflow; nil fails it.
	Child func(context.Context, node.SubRun) (node.SubResult, error)

	mu  sync.Mutex
	log bytes.Buffer
}

var _ node.Env = (*Env)(nil)

// New returns an Env with an input.
func New(in any) *Env {
	return &Env{Run: "run-1", Workflow: "wf-1", Node: "n1", In: in, Outs: map[string]any{}, Vars: map[string]any{}}
}

// RunID returns Run.
func (e *Env) RunID() string { return e.Run }

// WorkflowID returns Workflow.
func (e *Env) WorkflowID() string { return e.Workflow }

// NodeID returns Node.
func (e *Env) NodeID() string { return e.Node }

// Input returns In.
func (e *Env) Input() any { return e.In }

// Inputs returns Ins.
func (e *Env) Inputs() []node.Input { return e.Ins }

// Connected reports whether Wired holds the port.
func (e *Env) Connected(p string) bool { return e.Wired[p] }

// Store returns VarStore.
func (e *Env) Store() node.VariableStore { return e.VarStore }

// Payload returns PayloadV and HasPayload.
func (e *Env) Payload() (any, bool) { return e.PayloadV, e.HasPayload }

// Admin reports AdminCaller.
func (e *Env) Admin() bool { return e.AdminCaller }

// Source reads Outs by id, or by a name listed in Names.
func (e *Env) Source(ref string) (any, bool, error) {
	if id, ok := e.Names[ref]; ok {
		ref = id
	}
	if e.NotRun[ref] {
		return nil, false, nil
	}
	v, ok := e.Outs[ref]
	if !ok {
		return nil, false, node.Errorf(node.CodeSourceNotFound, "no node has the id or name %q", ref)
	}
	return v, true, nil
}

// Outputs returns a copy of Outs.
func (e *Env) Outputs() map[string]any { return maps.Clone(e.Outs) }

// Var reads Vars.
func (e *Env) Var(k string) (any, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.Vars[k]
	return v, ok
}

// SetVar writes Vars.
func (e *Env) SetVar(k string, v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Vars == nil {
		e.Vars = map[string]any{}
	}
	e.Vars[k] = v
}

// RunWorkflow calls Child.
func (e *Env) RunWorkflow(ctx context.Context, sub node.SubRun) (node.SubResult, error) {
	if e.Child == nil {
		return node.SubResult{}, node.Errorf("WORKFLOW_NOT_FOUND", "no workflows in this test")
	}
	return e.Child(ctx, sub)
}

// Logger writes text records, without times, to the log Log returns.
func (e *Env) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{e}, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// Log returns what the node logged, one record per line.
func (e *Env) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// Logged reports whether the log holds s.
func (e *Env) Logged(s string) bool { return strings.Contains(e.Log(), s) }

type lockedWriter struct{ e *Env }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	return w.e.log.Write(p)
}

// Build decodes a raw config for a spec and constructs the runner, as the
// engine does.
func Build(s *node.Spec, raw map[string]any) (node.Runner, error) {
	cfg, err := s.Decode(raw)
	if err != nil {
		return nil, err
	}
	return s.New(cfg)
}

// Run builds a node from a raw config and runs it once in env.
func Run(ctx context.Context, s *node.Spec, raw map[string]any, env *Env) (node.Result, error) {
	r, err := Build(s, raw)
	if err != nil {
		return node.Result{}, err
	}
	return r.Run(ctx, env)
}

// WantError reports unless err is a *node.Error with code; when field is
// set, the error must name it in Field and in its message.
func WantError(t testing.TB, what string, err error, code, field string) {
	t.Helper()
	var ne *node.Error
	if !errors.As(err, &ne) {
		t.Errorf("%s error = %v; want a *node.Error with code %s", what, err, code)
		return
	}
	if ne.Code != code {
		t.Errorf("%s error code = %q (%v); want %q", what, ne.Code, err, code)
	}
	if field != "" && (ne.Field != field || !strings.Contains(ne.Error(), field)) {
		t.Errorf("%s error field = %q, message %q; want it to name %q", what, ne.Field, ne.Error(), field)
	}
}
