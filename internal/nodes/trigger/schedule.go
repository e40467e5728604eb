package trigger

import (
	"errors"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/schedule"
)

func init() { node.Register(ScheduleSpec()) }

// ScheduleSpec is the Schedule trigger. The scheduler fires it (interval,
// cron or once) when the workflow's job is started; the node emits the
// firing: fired_at, scheduled_at and mode.
func ScheduleSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "schedule",
		DisplayName: "Schedule",
		Category:    node.CategoryTrigger,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Starts the workflow on a schedule (in the background: start the workflow's job): every interval_secs, on a five-field cron_expr (UTC), or once at run_at.",
		Fields: []node.Field{
			{Name: "mode", Kind: node.KindEnum, Enum: []string{"interval", "cron", "once"}, FoldCase: true,
				Description: "interval, cron or once; blank means the mode whose field is set (interval when none is)"},
			{Name: "interval_secs", Kind: node.KindInteger, Min: node.Bound(schedule.MinIntervalSecs),
				Description: "interval mode: seconds between firings, default 60, at least 10 (lower values become 10)"},
			{Name: "cron_expr", Kind: node.KindText,
				Description: "cron mode: minute hour day month weekday, with *, ranges, lists, steps, names, 0 or 7 for Sunday, or a macro such as @daily; evaluated in UTC"},
			{Name: "run_at", Kind: node.KindText, Description: "once mode: an ISO 8601 timestamp, taken as UTC when it has no offset"},
		},
		Outputs: []node.Port{{ID: "triggered", Label: "Triggered"}},
		Output: node.Object(map[string]any{
			"fired_at": node.T("string"), "scheduled_at": node.T("string"), "mode": node.T("string"),
		}),
		Trigger: true,
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			if _, err := ParseSchedule(c); err != nil {
				return nil, err
			}
			return node.RunnerFunc(emitPayload), nil
		},
	}
}

// ParseSchedule reads a decoded Schedule config into the spec the scheduler
// fires. Validation calls it too, so a schedule that cannot be read fails
// with INVALID_CONFIG naming its field.
func ParseSchedule(c node.Config) (*schedule.Spec, error) {
	cfg := map[string]any{}
	for _, name := range []string{"mode", "interval_secs", "cron_expr", "run_at"} {
		if !c.Blank(name) {
			cfg[name] = c.Value(name)
		}
	}
	sp, err := schedule.Parse(cfg)
	var fe *schedule.FieldError
	if errors.As(err, &fe) {
		return nil, node.ConfigError(fe.Field, "%s", fe.Reason)
	}
	return sp, err
}
