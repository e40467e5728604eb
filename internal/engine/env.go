package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// nodeEnv is what one node execution sees of its run.
type nodeEnv struct {
	r       *run
	idx     int
	input   any
	inputs  []node.Input
	overlay map[string]any // loop item and index variables in a loop body
	logger  *slog.Logger
}

var _ node.Env = (*nodeEnv)(nil)

func (e *nodeEnv) RunID() string      { return e.r.id }
func (e *nodeEnv) WorkflowID() string { return e.r.wfID }
func (e *nodeEnv) NodeID() string     { return e.r.p.nodes[e.idx].id }
func (e *nodeEnv) Input() any         { return e.input }

// Inputs lists the wires that fired into the node. The slice is valid
// during Run only.
func (e *nodeEnv) Inputs() []node.Input { return e.inputs }

func (e *nodeEnv) Source(ref string) (any, bool, error) {
	p := e.r.p
	i, ok := p.byID[ref]
	if !ok {
		i, ok = p.byName[ref]
		if ok && i < 0 {
			return nil, false, node.Errorf(node.CodeSourceNotFound, "several nodes are named %q; name the source by node id", ref)
		}
	}
	if !ok {
		return nil, false, node.Errorf(node.CodeSourceNotFound, "no node has the id or name %q", ref)
	}
	e.r.mu.RLock()
	defer e.r.mu.RUnlock()
	if !e.r.ok[i] {
		return nil, false, nil
	}
	return e.r.outputs[i], true, nil
}

func (e *nodeEnv) Outputs() map[string]any {
	e.r.mu.RLock()
	defer e.r.mu.RUnlock()
	m := make(map[string]any, len(e.r.outputs))
	for i, ok := range e.r.hasOut {
		if ok {
			m[e.r.p.nodes[i].id] = e.r.outputs[i]
		}
	}
	return m
}

func (e *nodeEnv) Connected(port string) bool { return e.r.p.nodes[e.idx].wired[port] }

func (e *nodeEnv) Var(key string) (any, bool) {
	if v, ok := e.overlay[key]; ok {
		return v, true
	}
	v, ok := (*e.r.vars.Load())[key]
	return v, ok
}

func (e *nodeEnv) SetVar(key string, v any) { e.r.setVar(key, v) }

// Vars returns a copy of the run's variables as this node sees them (a
// loop body's overlay included); the Code node hands them to the script
// as context.vars.
func (e *nodeEnv) Vars() map[string]any {
	base := *e.r.vars.Load()
	out := make(map[string]any, len(base)+len(e.overlay))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range e.overlay {
		out[k] = v
	}
	return out
}

func (e *nodeEnv) Store() node.VariableStore { return e.r.e.opts.Variables }

func (e *nodeEnv) Payload() (any, bool) { return e.r.req.Payload, e.r.req.HasPayload }

func (e *nodeEnv) Admin() bool { return e.r.req.Admin }

func (e *nodeEnv) Logger() *slog.Logger {
	if e.logger == nil {
		e.logger = slog.New(&logHandler{log: e.r.log, nodeID: e.NodeID()})
	}
	return e.logger
}

func (e *nodeEnv) RunWorkflow(ctx context.Context, sub node.SubRun) (node.SubResult, error) {
	return e.r.child(ctx, sub)
}

// setVar replaces the variables map with a copy holding the new value, so
// that readers of an earlier map are never disturbed.
func (r *run) setVar(key string, v any) {
	r.varsMu.Lock()
	defer r.varsMu.Unlock()
	old := *r.vars.Load()
	m := make(map[string]any, len(old)+1)
	maps.Copy(m, old)
	prev, had := old[key]
	m[key] = v
	r.vars.Store(&m)
	r.varsVer.Add(1)
	delta := value.Size(v) + int64(len(key))
	if had {
		delta -= value.Size(prev) + int64(len(key))
	}
	r.meter.addOverhead(delta)
}

// child runs another workflow for Execute Workflow.
func (r *run) child(ctx context.Context, sub node.SubRun) (node.SubResult, error) {
	if r.req.depth+1 > MaxDepth {
		return node.SubResult{}, node.Errorf(CodeRecursionLimit,
			"workflows call each other more than %d levels deep (this run is at depth %d); check for a workflow that executes itself", MaxDepth, r.req.depth)
	}
	src := r.e.opts.Workflows
	if src == nil {
		return node.SubResult{}, node.Errorf(CodeWorkflowNotFound, "no workflow store is attached to this run")
	}
	w, err := src.LoadWorkflow(ctx, sub.WorkflowID)
	if err != nil {
		if errors.Is(err, ErrWorkflowNotFound) {
			return node.SubResult{}, node.Errorf(CodeWorkflowNotFound, "workflow %q does not exist", sub.WorkflowID)
		}
		return node.SubResult{}, fmt.Errorf("load workflow %q: %w", sub.WorkflowID, err)
	}
	res := r.e.Run(ctx, Request{
		Workflow: w, Variables: sub.Variables, Trigger: "execute_workflow",
		Payload: sub.Payload, HasPayload: true, Secrets: r.mask.list(), Admin: r.req.Admin, depth: r.req.depth + 1,
	})
	out := node.SubResult{
		ExecutionID: res.ExecutionID, Success: res.Success, ErrorCode: res.ErrorCode,
		Outputs: res.Outputs, NodeOutputs: res.NodeOutputs,
	}
	if res.Error != nil {
		out.Error = *res.Error
	}
	return out, nil
}

// ErrWorkflowNotFound is returned by a WorkflowSource for an unknown id.
var ErrWorkflowNotFound = errors.New("workflow not found")
