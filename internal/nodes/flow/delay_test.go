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

func TestDelaySpec(t *testing.T) {
	t.Parallel()
	s := DelaySpec()
	if s.TypeID != "delay" || s.Category != node.CategoryUtility {
		t.Errorf("DelaySpec() = %q in %q; want delay in utility", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("delay"); !ok {
		t.Errorf("delay is not registered")
	}
}

// TestDelayPauses runs each delay in a synctest bubble, whose clock moves
// only when every goroutine waits: the pause is measured exactly and no real
// time passes.
func TestDelayPauses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  map[string]any
		want time.Duration
	}{
		{"default 1 s", nil, time.Second},
		{"blank fields", map[string]any{"duration": "", "unit": " "}, time.Second},
		{"unit defaults to s", map[string]any{"duration": 10}, 10 * time.Second},
		{"ms", map[string]any{"duration": 250, "unit": "ms"}, 250 * time.Millisecond},
		{"s", map[string]any{"duration": 2, "unit": "s"}, 2 * time.Second},
		{"m", map[string]any{"duration": 1.5, "unit": "m"}, 90 * time.Second},
		{"h", map[string]any{"duration": 2, "unit": "h"}, 2 * time.Hour},
		{"duration as text", map[string]any{"duration": "3"}, 3 * time.Second},
		{"fraction of a second", map[string]any{"duration": "0.5"}, 500 * time.Millisecond},
		{"zero", map[string]any{"duration": 0}, 0},
		{"negative clamped to 0", map[string]any{"duration": -5}, 0},
		{"negative text clamped to 0", map[string]any{"duration": "-1", "unit": "h"}, 0},
		{"capped at 24 h", map[string]any{"duration": 48, "unit": "h"}, 24 * time.Hour},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			in := map[string]any{"keep": "me"}
			env := nodetest.New(in)
			start := time.Now()
			res, err := nodetest.Run(t.Context(), DelaySpec(), tt.raw, env)
			if err != nil {
				t.Fatalf("%s: Run error: %v", tt.name, err)
			}
			if got := time.Since(start); got != tt.want {
				t.Errorf("%s: paused %v; want %v", tt.name, got, tt.want)
			}
			if !reflect.DeepEqual(res.Output, in) || res.Port != "" {
				t.Errorf("%s: Result = %+v; want the input on the default port", tt.name, res)
			}
		})
	}
}

func TestDelayCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := nodetest.Run(ctx, DelaySpec(), map[string]any{"duration": 1, "unit": "h"}, nodetest.New(nil))
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
			t.Fatalf("Run still pausing after cancel; want it to return at once")
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v; want at the cancel, 1s", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err := nodetest.Run(ctx, DelaySpec(), map[string]any{"duration": 5, "unit": "m"}, nodetest.New(nil))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run past its deadline error = %v; want context.DeadlineExceeded", err)
		}
	})
	// A run already cancelled does not pass through a zero delay either.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := nodetest.Run(ctx, DelaySpec(), map[string]any{"duration": 0}, nodetest.New(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Run(cancelled, 0) error = %v; want context.Canceled", err)
	}
}

func TestDelayConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"duration not a number", map[string]any{"duration": "soon"}, "duration"},
		{"duration boolean", map[string]any{"duration": true}, "duration"},
		{"unit unknown", map[string]any{"unit": "days"}, "unit"},
		{"unit capitals", map[string]any{"unit": "S"}, "unit"},
		{"unit number", map[string]any{"unit": 1}, "unit"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(DelaySpec(), tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
}
