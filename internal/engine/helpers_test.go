package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/data"
	_ "github.com/svcrun/svc/internal/nodes/flow"
	_ "github.com/svcrun/svc/internal/nodes/logic"
	_ "github.com/svcrun/svc/internal/nodes/trigger"
	"github.com/svcrun/svc/internal/value"
	"github.com/svcrun/svc/internal/workflow"
)

// probe lets a test watch and steer its test nodes.
type probe struct {
	mu       sync.Mutex
	attempts map[string]int
	started  chan string
	release  chan struct{}
	onRun    func(nodeID string, input any)
}

func newProbe() *probe {
	return &probe{attempts: map[string]int{}, started: make(chan string, 64), release: make(chan struct{})}
}

func (p *probe) attempt(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts[id]++
	return p.attempts[id]
}

func (p *probe) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts[id]
}

// testRegistry is the built-ins (without the files family) plus test types:
//
//	flaky: fails fail_times attempts with code (retryable when retryable is
//	  true, waiting after_ms when set), then outputs its input; ports out, error.
//	boom: always fails with code; ports out, error.
//	test_fail_on: fails BAD_INPUT when the input's field has value as text;
//	  ports out, error.
//	panic: panics.
//	block: reports its start on probe.started, then waits for probe.release
//	  or the run's end; its output is its input.
//	hook: calls probe.onRun and outputs its input.
//	secretive: has a secret field password and a credential field api_key;
//	  outputs them and logs them.
func testRegistry(p *probe) *node.Registry {
	reg := node.Default()
	in := []node.Port{node.InPort}
	outErr := []node.Port{node.OutPort, node.ErrorPort}
	for _, s := range []*node.Spec{
		{TypeID: "flaky", Inputs: in, Outputs: outErr, Enabled: true, Fields: []node.Field{
			{Name: "fail_times", Kind: node.KindInteger, Default: 1},
			{Name: "retryable", Kind: node.KindBoolean, Default: true},
			{Name: "code", Kind: node.KindText, Default: "RATE_LIMITED"},
			{Name: "after_ms", Kind: node.KindInteger, Default: 0},
		}, New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(func(_ context.Context, env node.Env) (node.Result, error) {
				n := p.attempt(env.NodeID())
				if n <= c.Int("fail_times") {
					err := &node.Error{Code: c.String("code"), Message: fmt.Sprintf("attempt %d failed", n),
						After: time.Duration(c.Int("after_ms")) * time.Millisecond}
					if c.Bool("retryable") {
						err.Retry = node.Retryable
					}
					return node.Result{}, err
				}
				return node.Result{Output: env.Input()}, nil
			}), nil
		}},
		{TypeID: "boom", Inputs: in, Outputs: outErr, Enabled: true, Fields: []node.Field{
			{Name: "code", Kind: node.KindText, Default: "BOOM"},
			{Name: "message", Kind: node.KindText, Default: "it broke"},
		}, New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(func(_ context.Context, env node.Env) (node.Result, error) {
				p.attempt(env.NodeID())
				return node.Result{}, node.Errorf(c.String("code"), "%s", c.String("message"))
			}), nil
		}},
		{TypeID: "test_fail_on", Inputs: in, Outputs: outErr, Enabled: true, Fields: []node.Field{
			{Name: "field", Kind: node.KindText},
			{Name: "value", Kind: node.KindText},
		}, New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(func(_ context.Context, env node.Env) (node.Result, error) {
				if v, _ := value.Lookup(env.Input(), c.String("field")); value.Text(v) == c.String("value") {
					return node.Result{}, node.Errorf("BAD_INPUT", "%s is refused", c.String("field"))
				}
				return node.Result{Output: env.Input()}, nil
			}), nil
		}},
		{TypeID: "panic", Inputs: in, Outputs: []node.Port{node.OutPort}, Enabled: true,
			New: func(node.Config) (node.Runner, error) {
				return node.RunnerFunc(func(context.Context, node.Env) (node.Result, error) { panic("test panic") }), nil
			}},
		{TypeID: "block", Inputs: in, Outputs: []node.Port{node.OutPort}, Enabled: true,
			New: func(node.Config) (node.Runner, error) {
				return node.RunnerFunc(func(ctx context.Context, env node.Env) (node.Result, error) {
					p.started <- env.NodeID()
					select {
					case <-p.release:
						return node.Result{Output: env.Input()}, nil
					case <-ctx.Done():
						return node.Result{}, ctx.Err()
					}
				}), nil
			}},
		{TypeID: "hook", Inputs: in, Outputs: []node.Port{node.OutPort}, Enabled: true,
			New: func(node.Config) (node.Runner, error) {
				return node.RunnerFunc(func(_ context.Context, env node.Env) (node.Result, error) {
					p.attempt(env.NodeID())
					if p.onRun != nil {
						p.onRun(env.NodeID(), env.Input())
					}
					return node.Result{Output: env.Input()}, nil
				}), nil
			}},
		{TypeID: "secretive", Inputs: in, Outputs: []node.Port{node.OutPort}, Enabled: true, Fields: []node.Field{
			{Name: "password", Kind: node.KindText, Secret: true},
			{Name: "api_key", Kind: node.KindText, Credential: true},
			{Name: "note", Kind: node.KindText},
		}, New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(func(_ context.Context, env node.Env) (node.Result, error) {
				env.Logger().Info("using " + c.String("password") + " and " + c.String("api_key"))
				if c.String("note") == "fail" {
					return node.Result{}, node.Errorf("AUTH", "rejected key %s", c.String("api_key"))
				}
				return node.Result{Output: map[string]any{"pw": c.String("password"), "key": c.String("api_key"), "note": c.String("note")}}, nil
			}), nil
		}},
	} {
		if err := reg.Add(s); err != nil {
			panic(err)
		}
	}
	return reg
}

// recorder is an EventSink keeping every event.
type recorder struct {
	mu     sync.Mutex
	events []engine.NodeEvent
	// main is the workflow of the run under test; events of other
	// workflows (child runs) are shown with their workflow id.
	main string
}

func (r *recorder) NodeStatus(e engine.NodeEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// trace returns events as "node:status[@iteration]" strings.
func (r *recorder) trace() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.events))
	for _, e := range r.events {
		s := e.NodeID + ":" + string(e.Status)
		if r.main != "" && e.WorkflowID != r.main {
			s = e.WorkflowID + "/" + s
		}
		if e.Iteration >= 0 {
			s += fmt.Sprintf("@%d", e.Iteration)
		}
		if e.ErrorCode != "" {
			s += "(" + e.ErrorCode + ")"
		}
		out = append(out, s)
	}
	return out
}

// statuses returns the events of one node.
func (r *recorder) of(nodeID string) []string {
	var out []string
	for _, s := range r.trace() {
		if id, _, _ := cutStatus(s); id == nodeID {
			out = append(out, s)
		}
	}
	return out
}

func cutStatus(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// memVars is an in-memory persistent variable store.
type memVars struct {
	mu   sync.Mutex
	m    map[string]any
	fail error
}

func (s *memVars) VariableGet(_ context.Context, wf, key string) (any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, false, s.fail
	}
	v, ok := s.m[wf+"/"+key]
	return v, ok, nil
}

func (s *memVars) VariableSet(_ context.Context, wf, key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.m == nil {
		s.m = map[string]any{}
	}
	s.m[wf+"/"+key] = v
	return nil
}

// memWorkflows is a WorkflowSource over parsed documents.
type memWorkflows struct {
	m     map[string]*workflow.Workflow
	loads atomic.Int32
}

func (s *memWorkflows) LoadWorkflow(_ context.Context, id string) (*workflow.Workflow, error) {
	s.loads.Add(1)
	w, ok := s.m[id]
	if !ok {
		return nil, engine.ErrWorkflowNotFound
	}
	return w, nil
}

// memCreds is a CredentialSource over a map.
type memCreds map[string]string

func (c memCreds) CredentialValue(_ context.Context, id string) (string, error) {
	v, ok := c[id]
	if !ok {
		return "", errors.New("no such credential")
	}
	return v, nil
}

func parse(t testing.TB, doc string) *workflow.Workflow {
	t.Helper()
	w, err := workflow.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return w
}

// out reads a dot path from a node's output in a result.
func out(res *engine.Result, nodeID, path string) any {
	v, _ := value.Lookup(res.NodeOutputs[nodeID], path)
	return v
}

// build makes a workflow from shorthands. A node is "id:type" with an
// optional JSON config after a space, a "!" after the type disabling it, and
// an optional retry after a second space ("retry=3/0" for 3 attempts, no
// backoff). An edge is "from.port>to.port" (ports optional).
func build(t testing.TB, nodes []string, edges []string) *workflow.Workflow {
	t.Helper()
	var ns, es []string
	for _, n := range nodes {
		id, rest, _ := strings.Cut(n, ":")
		typ, cfg, _ := strings.Cut(rest, " ")
		retry := ""
		if i := strings.LastIndex(cfg, " retry="); i >= 0 {
			var attempts, backoff int
			fmt.Sscanf(cfg[i+len(" retry="):], "%d/%d", &attempts, &backoff)
			retry = fmt.Sprintf(`,"retry":{"enabled":true,"max_attempts":%d,"backoff_ms":%d}`, attempts, backoff)
			cfg = cfg[:i]
		} else if strings.HasPrefix(cfg, "retry=") {
			var attempts, backoff int
			fmt.Sscanf(cfg[len("retry="):], "%d/%d", &attempts, &backoff)
			retry = fmt.Sprintf(`,"retry":{"enabled":true,"max_attempts":%d,"backoff_ms":%d}`, attempts, backoff)
			cfg = ""
		}
		disabled := strings.HasSuffix(typ, "!")
		typ = strings.TrimSuffix(typ, "!")
		if cfg == "" {
			cfg = "{}"
		}
		ns = append(ns, fmt.Sprintf(`{"id":%q,"node_type_id":%q,"disabled":%v,"config":%s%s}`, id, typ, disabled, cfg, retry))
	}
	for i, e := range edges {
		from, to, _ := strings.Cut(e, ">")
		f, fp, _ := strings.Cut(from, ".")
		tn, tp, _ := strings.Cut(to, ".")
		es = append(es, fmt.Sprintf(`{"id":"e%d","from":%q,"from_port":%q,"to":%q,"to_port":%q}`, i+1, f, fp, tn, tp))
	}
	return parse(t, fmt.Sprintf(`{"id":"w","name":"W","nodes":[%s],"edges":[%s]}`, strings.Join(ns, ","), strings.Join(es, ",")))
}
