// Package flow holds the nodes that pause a run: Delay and Wait.
package flow

import (
	"context"
	"time"

	"github.com/svcrun/svc/internal/node"
)

func init() { node.Register(DelaySpec()) }

// maxPause is the longest pause: a run cannot last longer anyway.
const maxPause = 24 * time.Hour

var units = map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}

// DelaySpec is the Delay node: it pauses, then passes its input on.
func DelaySpec() *node.Spec {
	return &node.Spec{
		TypeID:      "delay",
		DisplayName: "Delay",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Pauses the branch for a time, then passes its input on.",
		Fields: []node.Field{
			{Name: "duration", Kind: node.KindNumber, Default: 1.0, Min: node.Bound(0), Description: "how long, in unit"},
			{Name: "unit", Kind: node.KindEnum, Enum: []string{"ms", "s", "m", "h"}, Default: "s"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output:  map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "description": "the node's input, unchanged"},
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &Delay{For: pause(c.Float("duration"), units[c.String("unit")])}, nil
		},
	}
}

// pause converts an amount of a unit to a duration, capped at 24 hours.
func pause(amount float64, unit time.Duration) time.Duration {
	if amount*float64(unit) >= float64(maxPause) {
		return maxPause
	}
	return time.Duration(amount * float64(unit))
}

// Delay is a configured Delay node.
type Delay struct{ For time.Duration }

// Run waits, or returns early when the run is cancelled.
func (d *Delay) Run(ctx context.Context, env node.Env) (node.Result, error) {
	if err := sleep(ctx, d.For); err != nil {
		return node.Result{}, err
	}
	return node.Result{Output: env.Input()}, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
