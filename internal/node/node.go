// Package node is the contract between the engine and node types: the spec
// value that describes a type to the catalog, the validator and the MCP
// bridge; the decoding of a node's config under the rules every node shares;
// the typed errors that steer retries; and the registry of types.
//
// A node type is one Spec value. Its New function receives a decoded Config
// and returns a Runner; the engine calls Run with an Env, the node's only
// view of the run it is part of.
package node

import (
	"context"
	"log/slog"
)

// Category is the catalog group of a node type (its node_type).
type Category string

// The categories of the built-in node types.
const (
	CategoryTrigger     Category = "trigger"
	CategoryAction      Category = "core_action"
	CategoryFiles       Category = "files_storage"
	CategoryIntegration Category = "integration"
	CategoryAI          Category = "ai"
	CategoryLogic       Category = "logic"
	CategoryUtility     Category = "utility"
)

// Arity says how many wires an input port accepts.
type Arity string

// Input port arities. The zero value means one.
const (
	ArityOne  Arity = ""
	ArityMany Arity = "many"
)

// Port is an input or output of a node. ID is the port's display name in
// snake_case and is what edges name in from_port and to_port.
type Port struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Arity Arity  `json:"arity,omitempty"`
}

// Common port ids.
const (
	PortIn    = "in"
	PortOut   = "out"
	PortError = "error"
)

// Control marks node types whose effect on the run is carried out by the
// engine rather than by the node alone.
type Control int

const (
	// ControlNone is an ordinary node.
	ControlNone Control = iota
	// ControlLoop is a For Each loop: its Run returns an Iteration and the
	// engine runs the body once per item.
	ControlLoop
)

// Spec describes one node type. It is the single source of the catalog entry,
// the config schema, the ports and the constructor. A Spec is immutable once
// registered.
type Spec struct {
	TypeID      string
	DisplayName string
	Category    Category
	Version     string
	Description string
	Author      string

	// Fields are the config fields, in display order. InputSchema is derived
	// from them.
	Fields []Field
	// Output is the JSON Schema (Draft 7) of the node's output value.
	Output map[string]any

	Inputs  []Port
	Outputs []Port
	// PortsFor, when set, computes the ports from a node's raw config (one
	// port per configured source, say). It must accept any config, including
	// a malformed one, and fall back to Inputs and Outputs.
	PortsFor func(config map[string]any) (inputs, outputs []Port)

	// Trigger marks trigger nodes: no input port, always an entry node.
	Trigger bool
	// Plugin marks types provided by a WebAssembly plugin.
	Plugin bool
	// Enabled is false for a type switched off on this server (Shell
	// Command, Code and Database without their --allow-* flag).
	Enabled bool
	// EnableFlag is the server flag that switches the type on
	// (--allow-shell, say), named in the refusal of a switched-off node.
	EnableFlag string
	// Result marks a node whose output is a result of the workflow (the
	// Output node): a run lists these outputs, and Execute Workflow returns
	// them to its caller.
	Result bool
	// Control is how the engine treats the node beyond calling Run.
	Control Control

	// New builds a runner from a decoded config. It may reject the config
	// with an *Error (INVALID_CONFIG or a node-specific code).
	New func(Config) (Runner, error)
}

// Ports returns the node's ports for a config.
func (s *Spec) Ports(config map[string]any) (inputs, outputs []Port) {
	if s.PortsFor != nil {
		return s.PortsFor(config)
	}
	return s.Inputs, s.Outputs
}

// DefaultOutput is the port a successful run leaves through when Result.Port
// is empty: the first output that is not the error port.
func (s *Spec) DefaultOutput() string {
	for _, p := range s.Outputs {
		if p.ID != PortError {
			return p.ID
		}
	}
	return ""
}

// HasPort reports whether id is one of the ports.
func HasPort(ports []Port, id string) bool {
	for _, p := range ports {
		if p.ID == id {
			return true
		}
	}
	return false
}

// Runner runs one configured node. A runner may be reused for many runs and
// called concurrently; it must not keep state between calls.
type Runner interface {
	Run(ctx context.Context, env Env) (Result, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, env Env) (Result, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, env Env) (Result, error) { return f(ctx, env) }

// Result is what a successful node run produces.
type Result struct {
	// Output is the node's output value, visible to later nodes as $input
	// and $node.<id>.
	Output any
	// Port is the output port the run leaves through; empty means the
	// spec's default output.
	Port string
	// Stop ends the branch: no wire fires. Inside a loop body it also ends
	// the loop after the current iteration.
	Stop bool
	// Iterate is set by a ControlLoop node.
	Iterate *Iteration
}

// Iteration is a loop's plan, returned by a ControlLoop node; the engine runs
// the body once per item, one item after another.
type Iteration struct {
	Items    []any
	Total    int
	ItemVar  string
	IndexVar string
}

// Input is one wire that fired into a node in the current run (or, in a loop
// body, the current iteration), in completion order.
type Input struct {
	From     string // source node id
	FromPort string
	Port     string // the receiving port
	Value    any
}

// Env is the node's view of its run. Its methods may be called from the
// node's goroutine at any time during Run.
type Env interface {
	RunID() string
	WorkflowID() string
	NodeID() string

	// Input is the output of the node wired into this one; with several
	// wires, the one that fired last. Entry nodes get the run's payload.
	Input() any
	// Inputs lists every wire that fired into this node, in completion order.
	Inputs() []Input
	// Source reads the output of an earlier node by id (or by name when no
	// id matches and exactly one node has it). It returns a SOURCE_NOT_FOUND
	// error when no node matches, and ok false when the node exists but has
	// not succeeded (in a loop body: in the current iteration).
	Source(ref string) (v any, ok bool, err error)
	// Outputs returns the outputs of every node that has produced one, keyed
	// by node id. The map is a copy.
	Outputs() map[string]any
	// Connected reports whether a wire leaves the node's output port.
	Connected(port string) bool

	// Var and SetVar read and write the run's variables ($vars).
	Var(key string) (any, bool)
	SetVar(key string, v any)
	// Store is where persistent variables live; nil when no database is
	// attached to the run.
	Store() VariableStore

	// Payload is the event that started the run, when there is one (a
	// webhook request, or the input of a parent Execute Workflow node).
	Payload() (any, bool)
	// RunWorkflow runs another stored workflow as a child of this run.
	RunWorkflow(ctx context.Context, req SubRun) (SubResult, error)

	// Logger writes to the run log; records carry the node id.
	Logger() *slog.Logger
	// Admin reports whether an admin-scoped caller started the run on a
	// server (Database's allow_raw_sql needs one); false for background
	// runs and runs outside a server.
	Admin() bool
}

// VariableStore keeps variables that outlive a run (Set Variable with persist).
type VariableStore interface {
	VariableGet(ctx context.Context, workflowID, key string) (v any, ok bool, err error)
	VariableSet(ctx context.Context, workflowID, key string, v any) error
}

// SubRun asks for a child run of another workflow.
type SubRun struct {
	WorkflowID string
	Payload    any
	Variables  map[string]any
}

// SubResult is the outcome of a child run that finished.
type SubResult struct {
	ExecutionID string
	Success     bool
	ErrorCode   string
	Error       string
	// Outputs are the outputs of the child's Output nodes in completion order.
	Outputs     []any
	NodeOutputs map[string]any
}

// Common ports.
var (
	InPort    = Port{ID: PortIn, Label: "In"}
	OutPort   = Port{ID: PortOut, Label: "Out"}
	ErrorPort = Port{ID: PortError, Label: "Error"}
)

// Author and version of the built-in node types.
const (
	BuiltinAuthor  = "svc"
	BuiltinVersion = "1.0.0"
)
