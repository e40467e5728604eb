// Package engine runs workflows (DESIGN section 5): it walks the graph from
// the entry nodes, runs each node when every wire into it that will fire has
// fired, skips nodes whose wires can no longer fire, routes failures through
// error ports, retries as a node's typed error allows, runs loop bodies once
// per item, and records a log, per-node outputs, timings and byte accounting.
//
// One goroutine owns a run's state. A node runs on that goroutine when it is
// the only work ready, and on a goroutine of its own when branches run side
// by side (at most Options.MaxParallel at once).
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/workflow"
)

// Version is the engine version reported by the server.
const Version = "0.1.0"

// Error codes the engine gives to a run or a node, besides the node codes.
const (
	CodeInvalidWorkflow  = "INVALID_WORKFLOW"
	CodeNodeDisabled     = "NODE_TYPE_DISABLED"
	CodeNestedLoop       = "NESTED_LOOP"
	CodeLoopOverlap      = "LOOP_BODY_OVERLAP"
	CodeCancelled        = "CANCELLED"
	CodeRunTimeout       = "RUN_TIMEOUT"
	CodeRecursionLimit   = "RECURSION_LIMIT"
	CodeWorkflowNotFound = "WORKFLOW_NOT_FOUND"
)

// Defaults of Options.
const (
	DefaultMaxDuration    = 24 * time.Hour
	DefaultMaxParallel    = 16
	DefaultSampleInterval = 100 * time.Millisecond
	// MaxDepth is how deep Execute Workflow may nest runs.
	MaxDepth = 16
)

// WorkflowSource loads stored workflows for Execute Workflow.
type WorkflowSource interface {
	LoadWorkflow(ctx context.Context, id string) (*workflow.Workflow, error)
}

// CredentialSource resolves credential references in credential-resolved
// fields ({"credential": "<id>"}) to their secret values.
type CredentialSource interface {
	CredentialValue(ctx context.Context, id string) (string, error)
}

// EventSink receives node-status events. NodeStatus is called on the run's
// own goroutine, in order; it must not block.
type EventSink interface {
	NodeStatus(NodeEvent)
}

// Status is a node's status in a node-status event.
type Status string

// Node statuses.
const (
	StatusRunning Status = "running"
	StatusSuccess Status = "success"
	StatusError   Status = "error"
	StatusSkipped Status = "skipped"
)

// NodeEvent is a node-status event.
type NodeEvent struct {
	RunID      string
	WorkflowID string
	NodeID     string
	NodeTypeID string
	Status     Status
	// Iteration is the loop iteration (from 0) for a node in a loop body,
	// else -1.
	Iteration int
	// ErrorCode is set with StatusError.
	ErrorCode string
	At        time.Time
}

// Options configure an Engine. The zero value of each field is usable.
type Options struct {
	// Registry holds the node types; nil means node.Default().
	Registry *node.Registry
	// Logger receives the engine's own diagnostics; nil discards them.
	Logger *slog.Logger
	// Events receives node-status events; nil drops them.
	Events EventSink
	// Variables keeps persistent variables; nil means no database is
	// attached (Set Variable with persist logs a warning).
	Variables node.VariableStore
	// Workflows loads workflows for Execute Workflow; nil makes that node
	// fail with WORKFLOW_NOT_FOUND.
	Workflows WorkflowSource
	// Credentials resolves credential references; nil makes them fail.
	Credentials CredentialSource
	// MaxDuration caps a run; zero means 24 hours.
	MaxDuration time.Duration
	// MaxParallel bounds the nodes of one run running at once; zero means
	// 16, one runs nodes strictly one after another.
	MaxParallel int
	// SampleInterval is how often a run's bytes are sampled; zero means
	// 100 ms.
	SampleInterval time.Duration
}

// Engine runs workflows. It is safe for concurrent use.
type Engine struct {
	opts Options

	mu   sync.Mutex
	live map[string]*run
}

// New returns an engine.
func New(opts Options) *Engine {
	if opts.Registry == nil {
		opts.Registry = node.Default()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = DefaultMaxDuration
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = DefaultMaxParallel
	}
	if opts.SampleInterval <= 0 {
		opts.SampleInterval = DefaultSampleInterval
	}
	return &Engine{opts: opts, live: map[string]*run{}}
}

// Registry returns the registry the engine runs with.
func (e *Engine) Registry() *node.Registry { return e.opts.Registry }

// Plan is a workflow prepared for running: validated, its graph and loop
// bodies worked out, its expressions compiled, and the runners of nodes
// without expressions built on first use. A Plan is immutable and safe for
// concurrent runs; prepare one per stored version of a workflow.
type Plan struct {
	p   *plan
	reg *node.Registry
}

// Prepare prepares a workflow for running with this engine's registry.
func (e *Engine) Prepare(w *workflow.Workflow) *Plan {
	return &Plan{p: compile(w, e.opts.Registry), reg: e.opts.Registry}
}

// Findings returns the validation errors that keep the plan from running,
// if any.
func (p *Plan) Findings() []workflow.Finding { return p.p.findings }

// Request asks for one run.
type Request struct {
	// Plan, when set, is the prepared workflow to run; Workflow is then
	// ignored. A plan prepared with another registry is prepared again.
	Plan     *Plan
	Workflow *workflow.Workflow
	// RunID identifies the run; empty means a generated id.
	RunID string
	// Variables are laid over the document's variables ($vars).
	Variables map[string]any
	// Trigger is $run.trigger; empty means "manual".
	Trigger string
	// Payload, when HasPayload is set, is the event that started the run:
	// trigger nodes emit it and entry nodes receive it as $input.
	Payload    any
	HasPayload bool
	// Secrets are further values to mask in the result and logs (the saved
	// credential values a caller knows of).
	Secrets []string
	// Admin marks a run started by an admin-scoped caller on a server
	// (node.Env.Admin); sub-workflow runs inherit it.
	Admin bool

	depth int
}

// Result is a finished run. Its JSON form is the run result of
// spec/server.md section 2 with a few more fields.
type Result struct {
	ExecutionID      string             `json:"execution_id"`
	WorkflowID       string             `json:"workflow_id"`
	Success          bool               `json:"success"`
	Status           string             `json:"status"` // success, failed or cancelled
	NodeOutputs      map[string]any     `json:"node_outputs"`
	NodeStatus       map[string]Status  `json:"node_status"`
	Logs             []LogEntry         `json:"logs"`
	Error            *string            `json:"error"`
	ErrorCode        string             `json:"error_code,omitempty"`
	ErrorNodeID      string             `json:"error_node_id,omitempty"`
	ValidationErrors []workflow.Finding `json:"validation_errors"`
	StartedAt        time.Time          `json:"started_at"`
	FinishedAt       time.Time          `json:"finished_at"`
	DurationMs       float64            `json:"duration_ms"`
	NodeTimings      map[string]Timing  `json:"node_timings"`
	// Outputs are the outputs of the workflow's result nodes (Output), in
	// completion order; OutputNodeID is the node of the last one.
	Outputs      []any  `json:"-"`
	OutputNodeID string `json:"-"`
	// Performance is the run's byte accounting over time.
	Performance *PerfReport `json:"-"`
}

// Run statuses.
const (
	RunSuccess   = "success"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// Timing is a node's time in a run. A node in a loop body runs once per
// iteration; its timing sums them.
type Timing struct {
	StartedAtMs int64   `json:"started_at_ms"`
	DurationMs  float64 `json:"duration_ms"`
	Runs        int     `json:"runs"`
	Attempts    int     `json:"attempts"`
}

// Run runs a workflow to its end and returns the result. It returns when the
// run finishes, fails, or ctx is cancelled (the result then says cancelled).
func (e *Engine) Run(ctx context.Context, req Request) *Result {
	if req.RunID == "" {
		req.RunID = NewRunID()
	}
	var p *plan
	if req.Plan != nil && req.Plan.reg == e.opts.Registry {
		p = req.Plan.p
	} else {
		if req.Plan != nil {
			req.Workflow = req.Plan.p.wf
		}
		if req.Workflow == nil {
			req.Workflow = &workflow.Workflow{}
		}
		p = compile(req.Workflow, e.opts.Registry)
	}
	r := newRun(e, p, req)
	if p.refusal != nil {
		return r.refuse()
	}
	e.mu.Lock()
	e.live[r.id] = r
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.live, r.id)
		e.mu.Unlock()
	}()
	return r.execute(ctx)
}

// NewRunID returns a run id: 32 hex digits, the first 12 the time in Unix
// milliseconds and the rest random, so that ids sort by start time and a
// store's index takes new runs at its end rather than all over it.
func NewRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	return hex.EncodeToString(b[:])
}
