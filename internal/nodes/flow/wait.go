package flow

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(WaitSpec()) }

// WaitSpec is the Wait node. In duration mode it pauses; in condition mode
// it checks a field of its input once and leaves through Done on a match,
// else through Timed out (or Done when nothing is wired to Timed out).
func WaitSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "wait",
		DisplayName: "Wait",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Pauses for a duration, or checks a condition on its input once.",
		Fields: []node.Field{
			{Name: "mode", Kind: node.KindEnum, Enum: []string{"duration", "condition"}, Default: "duration"},
			{Name: "duration_secs", Kind: node.KindNumber, Default: 5.0, Min: node.Bound(0)},
			{Name: "field", Kind: node.KindText, Description: "condition mode: dot path into the input; blank uses the whole input"},
			{Name: "expected", Kind: node.KindText, Description: `condition mode: "200" matches the number 200, "true" the boolean; otherwise exact text; missing or null never matches`},
			{Name: "poll_interval_secs", Kind: node.KindNumber, Description: "accepted but unused: the condition is checked once"},
			{Name: "timeout_secs", Kind: node.KindNumber, Description: "accepted but unused"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{{ID: "done", Label: "Done"}, {ID: "timed_out", Label: "Timed out"}},
		Output: node.Object(map[string]any{
			"waited_ms": node.T("integer"),
			"timed_out": node.T("boolean"),
			"mode":      node.T("string"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &Wait{
				Condition: c.String("mode") == "condition",
				For:       pause(c.Float("duration_secs"), time.Second),
				Field:     c.String("field"),
				Expected:  c.String("expected"),
			}, nil
		},
	}
}

// Wait is a configured Wait node.
type Wait struct {
	Condition bool
	For       time.Duration
	Field     string
	Expected  string
}

// Run pauses or checks.
func (w *Wait) Run(ctx context.Context, env node.Env) (node.Result, error) {
	if !w.Condition {
		start := time.Now()
		if err := sleep(ctx, w.For); err != nil {
			return node.Result{}, err
		}
		return node.Result{Port: "done", Output: map[string]any{
			"waited_ms": int(time.Since(start).Milliseconds()), "timed_out": false, "mode": "duration",
		}}, nil
	}
	v, found := value.Lookup(env.Input(), w.Field)
	matched := found && Expect(v, w.Expected)
	port := "done"
	if !matched && env.Connected("timed_out") {
		port = "timed_out"
	}
	return node.Result{Port: port, Output: map[string]any{"waited_ms": 0, "timed_out": !matched, "mode": "condition"}}, nil
}

// Expect is the Wait match: expected text that reads as a number matches an
// equal number, "true" and "false" match booleans, anything else must equal
// the value's text exactly. Null never matches.
func Expect(v any, expected string) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return expected == strconv.FormatBool(t)
	case string:
		return t == expected
	}
	if f, ok := value.Number(v); ok {
		e, err := strconv.ParseFloat(strings.TrimSpace(expected), 64)
		return err == nil && e == f
	}
	return value.Text(v) == expected
}
