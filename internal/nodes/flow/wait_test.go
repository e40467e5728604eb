package flow

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestWaitSpec(t *testing.T) {
	t.Parallel()
	s := WaitSpec()
	if s.TypeID != "wait" || s.Category != node.CategoryUtility {
		t.Errorf("WaitSpec() = %q in %q; want wait in utility", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{{ID: "done", Label: "Done"}, {ID: "timed_out", Label: "Timed out"}}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("wait"); !ok {
		t.Errorf("wait is not registered")
	}
}

// TestWaitDuration runs in synctest bubbles: the fake clock makes waited_ms
// exact and no real time passes.
func TestWaitDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  map[string]any
		want time.Duration
	}{
		{"default 5 s", nil, 5 * time.Second},
		{"mode duration by name", map[string]any{"mode": "duration", "duration_secs": 2}, 2 * time.Second},
		{"blank duration", map[string]any{"duration_secs": ""}, 5 * time.Second},
		{"fraction", map[string]any{"duration_secs": "0.25"}, 250 * time.Millisecond},
		{"zero", map[string]any{"duration_secs": 0}, 0},
		{"negative clamped to 0", map[string]any{"duration_secs": -3}, 0},
		{"condition fields ignored", map[string]any{"duration_secs": 1, "field": "x", "expected": "y"}, time.Second},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			env := nodetest.New(map[string]any{"x": "not y"})
			env.Wired = map[string]bool{"timed_out": true}
			start := time.Now()
			res, err := nodetest.Run(t.Context(), WaitSpec(), tt.raw, env)
			if err != nil {
				t.Fatalf("%s: Run error: %v", tt.name, err)
			}
			if got := time.Since(start); got != tt.want {
				t.Errorf("%s: paused %v; want %v", tt.name, got, tt.want)
			}
			want := map[string]any{"waited_ms": int(tt.want.Milliseconds()), "timed_out": false, "mode": "duration"}
			if !reflect.DeepEqual(res.Output, want) || res.Port != "done" {
				t.Errorf("%s: Result = %+v; want Output %v on done", tt.name, res, want)
			}
		})
	}
}

func TestWaitDurationCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := nodetest.Run(ctx, WaitSpec(), map[string]any{"duration_secs": 3600}, nodetest.New(nil))
			done <- err
		}()
		time.Sleep(time.Second)
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run error = %v; want context.Canceled", err)
			}
		default:
			t.Fatalf("Run still waiting after cancel; want it to return at once")
		}
	})
}

func TestWaitCondition(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"status": 200,
		"code":   "200",
		"ok":     true,
		"off":    false,
		"state":  "Ready",
		"empty":  "",
		"none":   nil,
		"ratio":  0.5,
		"body":   map[string]any{"items": []any{map[string]any{"id": "a1"}}},
	}
	tests := []struct {
		name     string
		field    string
		expected any
		match    bool
	}{
		{"200 matches number 200", "status", "200", true},
		{"200.0 matches number 200", "status", "200.0", true},
		{"spaces around a number", "status", " 200 ", true},
		{"201 does not match 200", "status", "201", false},
		{"text does not match a number", "status", "OK", false},
		{"200 matches text 200", "code", "200", true},
		{"text match is exact", "code", "200.0", false},
		{"true matches boolean", "ok", "true", true},
		{"false matches boolean", "off", "false", true},
		{"true does not match false", "off", "true", false},
		{"TRUE is not true", "ok", "TRUE", false},
		{"yes is not true", "ok", "yes", false},
		{"exact text", "state", "Ready", true},
		{"text is case-sensitive", "state", "ready", false},
		{"text is not trimmed", "state", "Ready ", false},
		{"fraction", "ratio", "0.5", true},
		{"dot path with index", "body.items.0.id", "a1", true},
		{"empty text matches empty expected", "empty", "", true},
		{"missing never matches", "absent", "", false},
		{"missing never matches text", "body.items.3.id", "a1", false},
		{"null never matches blank", "none", "", false},
		{"null never matches null text", "none", "null", false},
		{"object as JSON text", "body.items.0", `{"id":"a1"}`, true},
		{"number expected from an expression", "status", 200, true},
	}
	for _, tt := range tests {
		for _, wired := range []bool{false, true} {
			env := nodetest.New(in)
			if wired {
				env.Wired = map[string]bool{"timed_out": true}
			}
			raw := map[string]any{"mode": "condition", "field": tt.field, "expected": tt.expected,
				"duration_secs": 60, "poll_interval_secs": 1, "timeout_secs": 30}
			res, err := nodetest.Run(t.Context(), WaitSpec(), raw, env)
			if err != nil {
				t.Errorf("%s: Run error: %v", tt.name, err)
				continue
			}
			wantPort := "done"
			if !tt.match && wired {
				wantPort = "timed_out"
			}
			want := map[string]any{"waited_ms": 0, "timed_out": !tt.match, "mode": "condition"}
			if res.Port != wantPort || !reflect.DeepEqual(res.Output, want) {
				t.Errorf("%s (timed_out wired %v): Port %q Output %v; want %q %v", tt.name, wired, res.Port, res.Output, wantPort, want)
			}
		}
	}
}

// TestWaitConditionWholeInput: a blank field checks the whole input, once,
// without pausing.
func TestWaitConditionWholeInput(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		env := nodetest.New("go")
		start := time.Now()
		res, err := nodetest.Run(t.Context(), WaitSpec(), map[string]any{"mode": "condition", "expected": "go", "duration_secs": 60}, env)
		if err != nil {
			t.Fatalf("Run error: %v", err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("condition mode paused %v; want no pause", got)
		}
		if res.Port != "done" || res.Output.(map[string]any)["timed_out"] != false {
			t.Errorf("Result = %+v; want a match on done", res)
		}
	})
	for _, in := range []any{nil, map[string]any{}} {
		env := nodetest.New(in)
		env.Wired = map[string]bool{"timed_out": true}
		res, err := nodetest.Run(t.Context(), WaitSpec(), map[string]any{"mode": "condition", "expected": ""}, env)
		if err != nil {
			t.Fatalf("Run error: %v", err)
		}
		// null never matches; {} reads as the text "{}", not "".
		if res.Port != "timed_out" {
			t.Errorf("input %#v: Port = %q; want timed_out", in, res.Port)
		}
	}
}

func TestWaitConfig(t *testing.T) {
	t.Parallel()
	// poll_interval_secs and timeout_secs are accepted, as numbers.
	for _, raw := range []map[string]any{
		{"poll_interval_secs": 5, "timeout_secs": 60},
		{"poll_interval_secs": "2", "timeout_secs": "120"},
		{"poll_interval_secs": "", "timeout_secs": nil},
		{"mode": "condition", "poll_interval_secs": 0.5},
	} {
		if _, err := nodetest.Build(WaitSpec(), raw); err != nil {
			t.Errorf("Build(%v) error: %v", raw, err)
		}
	}
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"unknown mode", map[string]any{"mode": "poll"}, "mode"},
		{"duration_secs not a number", map[string]any{"duration_secs": "five"}, "duration_secs"},
		{"poll_interval_secs not a number", map[string]any{"poll_interval_secs": "often"}, "poll_interval_secs"},
		{"timeout_secs not a number", map[string]any{"timeout_secs": "never"}, "timeout_secs"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(WaitSpec(), tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
}

func TestExpect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v        any
		expected string
		want     bool
	}{
		{200, "200", true},
		{200.0, "200", true},
		{int64(200), "200", true},
		{200, "2e2", true},
		{200, "abc", false},
		{200, "", false},
		{"200", "200", true},
		{"200", " 200", false},
		{true, "true", true},
		{false, "false", true},
		{true, "1", false},
		{nil, "", false},
		{nil, "null", false},
		{"", "", true},
		{[]any{1}, "[1]", true},
	}
	for _, tt := range tests {
		if got := Expect(tt.v, tt.expected); got != tt.want {
			t.Errorf("Expect(%#v, %q) = %v; want %v", tt.v, tt.expected, got, tt.want)
		}
	}
}
