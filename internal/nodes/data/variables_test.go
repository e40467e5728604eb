package data

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// memStore is a node.VariableStore in memory, keyed by workflow id and key.
type memStore struct {
	mu   sync.Mutex
	vals map[[2]string]any
	err  error // returned by every call when set
}

func newMemStore() *memStore { return &memStore{vals: map[[2]string]any{}} }

func (s *memStore) VariableGet(_ context.Context, workflowID, key string) (any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, false, s.err
	}
	v, ok := s.vals[[2]string{workflowID, key}]
	return v, ok, nil
}

func (s *memStore) VariableSet(_ context.Context, workflowID, key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.vals[[2]string{workflowID, key}] = v
	return nil
}

func TestVariableSpecs(t *testing.T) {
	t.Parallel()
	for _, s := range []*node.Spec{SetVariableSpec(), GetVariableSpec()} {
		if s.Category != node.CategoryUtility {
			t.Errorf("%s category = %q; want utility", s.TypeID, s.Category)
		}
		if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
			t.Errorf("%s Inputs = %v; want %v", s.TypeID, s.Inputs, want)
		}
		if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
			t.Errorf("%s Outputs = %v; want %v", s.TypeID, s.Outputs, want)
		}
		if _, ok := node.Default().Lookup(s.TypeID); !ok {
			t.Errorf("%s is not registered", s.TypeID)
		}
	}
	if SetVariableSpec().TypeID != "set_variable" || GetVariableSpec().TypeID != "get_variable" {
		t.Errorf("type ids = %q, %q; want set_variable, get_variable", SetVariableSpec().TypeID, GetVariableSpec().TypeID)
	}
}

func TestSetVariable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value any
	}{
		{"text", "hello"},
		{"number", 42},
		{"boolean", false},
		{"object", map[string]any{"a": []any{1}}},
		{"array", []any{"x", nil}},
		{"null", nil},
		{"empty text", ""},
	}
	for _, tt := range tests {
		env := nodetest.New("in")
		res, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": "k", "value": tt.value}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if want := map[string]any{"key": "k", "value": tt.value}; !reflect.DeepEqual(res.Output, want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, want)
		}
		got, ok := env.Var("k")
		if !ok || !reflect.DeepEqual(got, tt.value) {
			t.Errorf("%s: Var(k) = %#v, %v; want %#v, true", tt.name, got, ok, tt.value)
		}
		if env.Logged(noStore) {
			t.Errorf("%s: log = %q; want no persist warning without persist", tt.name, env.Log())
		}
	}
}

// TestSetVariableLog: the log shows the name, type and size of the value,
// never the value itself.
func TestSetVariableLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		value    any
		wantType string
		wantSize string
		secret   string
	}{
		{"text", "s3cr3t-t0ken", "string", "14 bytes", "s3cr3t-t0ken"},
		{"object", map[string]any{"password": "hunter2-xyz"}, "object", "26 bytes", "hunter2-xyz"},
		{"number", 987654321, "number", "9 bytes", "987654321"},
		{"array", []any{"tok-abc-123"}, "array", "15 bytes", "tok-abc-123"},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		env.VarStore = newMemStore()
		if _, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": "api_token", "value": tt.value, "persist": true}, env); err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		log := env.Log()
		for _, s := range []string{"api_token", tt.wantType, tt.wantSize} {
			if !strings.Contains(log, s) {
				t.Errorf("%s: log = %q; want it to hold %q", tt.name, log, s)
			}
		}
		if strings.Contains(log, tt.secret) {
			t.Errorf("%s: log = %q; want the value %q absent", tt.name, log, tt.secret)
		}
	}
}

func TestSetVariablePersist(t *testing.T) {
	t.Parallel()
	// Without a store, persist has no effect beyond a warning.
	env := nodetest.New(nil)
	if _, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": "k", "value": 1, "persist": true}, env); err != nil {
		t.Fatalf("Run without store error: %v", err)
	}
	if !env.Logged("level=WARN") || !env.Logged(noStore) {
		t.Errorf("log = %q; want the no-database warning", env.Log())
	}
	if v, ok := env.Var("k"); !ok || v != 1 {
		t.Errorf("Var(k) = %v, %v; want 1, true", v, ok)
	}

	// With a store, the value is saved per workflow and read back later.
	store := newMemStore()
	for _, tt := range []struct {
		wf, key string
		value   any
		persist any
	}{
		{"wf-a", "counter", 3, true},
		{"wf-b", "counter", "other workflow", "yes"},
		{"wf-a", "plain", "not saved", false},
		{"wf-a", "default_off", "not saved", nil},
	} {
		env := nodetest.New(nil)
		env.Workflow = tt.wf
		env.VarStore = store
		if _, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": tt.key, "value": tt.value, "persist": tt.persist}, env); err != nil {
			t.Fatalf("Run(%s %s) error: %v", tt.wf, tt.key, err)
		}
	}
	want := map[[2]string]any{{"wf-a", "counter"}: 3, {"wf-b", "counter"}: "other workflow"}
	if !reflect.DeepEqual(store.vals, want) {
		t.Errorf("store = %v; want %v", store.vals, want)
	}
	for _, tt := range []struct {
		wf        string
		want      any
		wantFound bool
	}{
		{"wf-a", 3, true},
		{"wf-b", "other workflow", true},
		{"wf-c", "dflt", false},
	} {
		env := nodetest.New(nil)
		env.Workflow = tt.wf
		env.VarStore = store
		res, err := nodetest.Run(t.Context(), GetVariableSpec(), map[string]any{"key": "counter", "persist": true, "default": "dflt"}, env)
		if err != nil {
			t.Fatalf("Get(%s) error: %v", tt.wf, err)
		}
		if want := map[string]any{"key": "counter", "value": tt.want, "found": tt.wantFound}; !reflect.DeepEqual(res.Output, want) {
			t.Errorf("Get(%s) Output = %#v; want %#v", tt.wf, res.Output, want)
		}
	}
}

func TestSetVariableStoreError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	store := newMemStore()
	store.err = boom
	env := nodetest.New(nil)
	env.VarStore = store
	_, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": "k", "value": "v", "persist": true}, env)
	nodetest.WantError(t, "failed save", err, node.CodeDBError, "")
	if !errors.Is(err, boom) {
		t.Errorf("error = %v; want it to wrap the store error", err)
	}
	// Without persist the store is not touched.
	env = nodetest.New(nil)
	env.VarStore = store
	if _, err := nodetest.Run(t.Context(), SetVariableSpec(), map[string]any{"key": "k", "value": "v"}, env); err != nil {
		t.Errorf("Run without persist error: %v; want none", err)
	}
}

func TestGetVariable(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	store.vals[[2]string{"wf-1", "saved"}] = "from disk"
	store.vals[[2]string{"wf-1", "both"}] = "from disk"
	tests := []struct {
		name      string
		raw       map[string]any
		store     bool
		want      any
		wantFound bool
		wantWarn  bool
	}{
		{"found in the run", map[string]any{"key": "run"}, false, "run value", true, false},
		{"found null in the run", map[string]any{"key": "nullvar", "default": "d"}, false, nil, true, false},
		{"not found gives the default", map[string]any{"key": "nope", "default": map[string]any{"d": 1}}, false, map[string]any{"d": 1}, false, false},
		{"not found without default is null", map[string]any{"key": "nope"}, false, nil, false, false},
		{"saved value ignored without persist", map[string]any{"key": "saved", "default": 0}, true, 0, false, false},
		{"persist falls back to the saved value", map[string]any{"key": "saved", "persist": true}, true, "from disk", true, false},
		{"run value wins over the saved one", map[string]any{"key": "both", "persist": "true"}, true, "run both", true, false},
		{"persist, nothing saved", map[string]any{"key": "nope", "persist": true, "default": "d"}, true, "d", false, false},
		{"persist without a store warns", map[string]any{"key": "saved", "persist": true, "default": "d"}, false, "d", false, true},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		env.Vars = map[string]any{"run": "run value", "nullvar": nil, "both": "run both"}
		if tt.store {
			env.VarStore = store
		}
		res, err := nodetest.Run(t.Context(), GetVariableSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		want := map[string]any{"key": tt.raw["key"], "value": tt.want, "found": tt.wantFound}
		if !reflect.DeepEqual(res.Output, want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, want)
		}
		if got := env.Logged(noStore); got != tt.wantWarn {
			t.Errorf("%s: warned %v (log %q); want %v", tt.name, got, env.Log(), tt.wantWarn)
		}
	}
}

func TestGetVariableStoreError(t *testing.T) {
	t.Parallel()
	boom := errors.New("db closed")
	store := newMemStore()
	store.err = boom
	env := nodetest.New(nil)
	env.VarStore = store
	_, err := nodetest.Run(t.Context(), GetVariableSpec(), map[string]any{"key": "k", "persist": true}, env)
	nodetest.WantError(t, "failed read", err, node.CodeDBError, "")
	if !errors.Is(err, boom) {
		t.Errorf("error = %v; want it to wrap the store error", err)
	}
}

func TestVariableConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  *node.Spec
		raw   map[string]any
		field string
	}{
		{"set key required", SetVariableSpec(), map[string]any{"value": 1}, "key"},
		{"set blank key", SetVariableSpec(), map[string]any{"key": " ", "value": 1}, "key"},
		{"set persist unreadable", SetVariableSpec(), map[string]any{"key": "k", "persist": "maybe"}, "persist"},
		{"get key required", GetVariableSpec(), map[string]any{}, "key"},
		{"get persist unreadable", GetVariableSpec(), map[string]any{"key": "k", "persist": "sometimes"}, "persist"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(tt.spec, tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
}
