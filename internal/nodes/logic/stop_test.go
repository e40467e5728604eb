package logic

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestStopSpec(t *testing.T) {
	t.Parallel()
	s := StopSpec()
	if s.TypeID != "stop" || s.Category != node.CategoryLogic {
		t.Errorf("StopSpec() = %q in %q; want stop in logic", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if len(s.Outputs) != 0 {
		t.Errorf("Outputs = %v; want none", s.Outputs)
	}
	if _, ok := node.Default().Lookup("stop"); !ok {
		t.Errorf("stop is not registered")
	}
}

func TestStopRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reason  any
		wantLog string
	}{
		{"reason", "quota reached", "branch stopped: quota reached"},
		{"number reason", 42, "branch stopped: 42"},
		{"no reason", nil, "branch stopped"},
		{"blank reason", "  ", "branch stopped"},
	}
	for _, tt := range tests {
		env := nodetest.New(map[string]any{"x": 1})
		res, err := nodetest.Run(t.Context(), StopSpec(), map[string]any{"reason": tt.reason}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !res.Stop || res.Output != nil || res.Port != "" || res.Iterate != nil {
			t.Errorf("%s: Result = %+v; want Stop only", tt.name, res)
		}
		if !env.Logged(tt.wantLog) {
			t.Errorf("%s: log = %q; want it to hold %q", tt.name, env.Log(), tt.wantLog)
		}
	}
	// Without a reason the log line ends after "branch stopped".
	env := nodetest.New(nil)
	if _, err := nodetest.Run(t.Context(), StopSpec(), nil, env); err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if env.Logged("branch stopped:") {
		t.Errorf("log = %q; want no reason part", env.Log())
	}
}
