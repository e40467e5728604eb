package trigger

import (
	"errors"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
	"github.com/svcrun/svc/internal/schedule"
)

// TestBackgroundConfigErrors checks that a bad Webhook or Schedule config
// fails validation with the node's code, naming the field.
func TestBackgroundConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec        *node.Spec
		raw         map[string]any
		code, field string
	}{
		{WebhookSpec(), map[string]any{"port": 80}, CodeInvalidPort, "port"},
		{WebhookSpec(), map[string]any{"port": 70000}, CodeInvalidPort, "port"},
		{WebhookSpec(), map[string]any{"port": "many"}, CodeInvalidPort, "port"},
		{WebhookSpec(), map[string]any{"method": "DELETE"}, node.CodeInvalidConfig, "method"},
		{ScheduleSpec(), map[string]any{"mode": "cron", "cron_expr": "61 * * * *"}, node.CodeInvalidConfig, "cron_expr"},
		{ScheduleSpec(), map[string]any{"mode": "cron", "cron_expr": "* * 0 * *"}, node.CodeInvalidConfig, "cron_expr"},
		{ScheduleSpec(), map[string]any{"mode": "once", "run_at": "next tuesday"}, node.CodeInvalidConfig, "run_at"},
		{ScheduleSpec(), map[string]any{"mode": "hourly"}, node.CodeInvalidConfig, "mode"},
		{ScheduleSpec(), map[string]any{"interval_secs": 60, "cron_expr": "@daily"}, node.CodeInvalidConfig, "mode"},
	} {
		_, err := nodetest.Run(t.Context(), tc.spec, tc.raw, nodetest.New(nil))
		var ne *node.Error
		if !errors.As(err, &ne) || ne.Code != tc.code || ne.Field != tc.field {
			t.Errorf("%s %v: %v; want %s naming %s", tc.spec.TypeID, tc.raw, err, tc.code, tc.field)
		}
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  map[string]any
		kind string
		iv   time.Duration
	}{
		{map[string]any{}, schedule.KindInterval, time.Minute},
		{map[string]any{"interval_secs": 3}, schedule.KindInterval, 10 * time.Second},
		{map[string]any{"cron_expr": "@hourly"}, schedule.KindCron, 0},
		{map[string]any{"mode": "ONCE", "run_at": "2030-01-01T00:00:00"}, schedule.KindOnce, 0},
	} {
		cfg, err := ScheduleSpec().Decode(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := ParseSchedule(cfg)
		if err != nil || sp.Kind != tc.kind || sp.Interval != tc.iv {
			t.Errorf("ParseSchedule(%v) = %+v, %v; want %s every %v", tc.raw, sp, err, tc.kind, tc.iv)
		}
	}
}

func TestWebhookPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "/webhook", " ": "/webhook", "in": "/in", "/a/b": "/a/b"} {
		if got := WebhookPath(in); got != want {
			t.Errorf("WebhookPath(%q) = %q; want %q", in, got, want)
		}
	}
}
