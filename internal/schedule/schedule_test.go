package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adhocore/gronx"
)

// start is a Wednesday.
var start = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

const minute = "2006-01-02 15:04"

func utc(s string) time.Time {
	t, err := time.Parse(minute, s)
	if err != nil {
		panic(err)
	}
	return t
}

func zone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func TestCronNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		from time.Time // zero means start
		want string    // UTC; "" means never
	}{
		// Plain fields, lists, ranges, steps.
		{expr: "* * * * *", want: "2025-01-15 10:31"},
		{expr: "*/15 * * * *", want: "2025-01-15 10:45"},
		{expr: "*/7 * * * *", want: "2025-01-15 10:35"},
		{expr: "0 * * * *", want: "2025-01-15 11:00"},
		{expr: "30 10 * * *", want: "2025-01-16 10:30"}, // strictly after
		{expr: "31 10 * * *", want: "2025-01-15 10:31"},
		{expr: "0 9 * * *", want: "2025-01-16 09:00"},
		{expr: "00 09 * * *", want: "2025-01-16 09:00"},
		{expr: "0 9-17 * * *", want: "2025-01-15 11:00"},
		{expr: "15,45 * * * *", want: "2025-01-15 10:45"},
		{expr: "5-10 11 * * *", want: "2025-01-15 11:05"},
		{expr: "10-40/15 * * * *", want: "2025-01-15 10:40"},
		{expr: "5/20 * * * *", want: "2025-01-15 10:45"},
		{expr: "0 */6 * * *", want: "2025-01-15 12:00"},
		{expr: "0 1/6 * * *", want: "2025-01-15 13:00"},
		{expr: "0 22 * * 1-5", want: "2025-01-15 22:00"},
		{expr: "0 0 1 * *", want: "2025-02-01 00:00"},
		{expr: "0 0 15 * *", want: "2025-02-15 00:00"},
		{expr: "0 12 15 * *", want: "2025-01-15 12:00"},
		{expr: "0 0 31 * *", want: "2025-01-31 00:00"},
		{expr: "0 0 31 */2 *", want: "2025-01-31 00:00"},
		{expr: "0 0 31 2-12/2 *", want: "2025-08-31 00:00"},
		{expr: "0 0 1-30/7 * *", want: "2025-01-22 00:00"},
		{expr: "59 23 31 12 *", want: "2025-12-31 23:59"},
		{expr: "30 10 15 1 *", want: "2026-01-15 10:30"},
		{expr: "  0   0  *  *  *  ", want: "2025-01-16 00:00"},
		{expr: "0\t0\t*\t*\t*", want: "2025-01-16 00:00"},
		// Sunday as 0 and 7, weekday names and ranges.
		{expr: "0 0 * * 0", want: "2025-01-19 00:00"},
		{expr: "0 0 * * 7", want: "2025-01-19 00:00"},
		{expr: "0 0 * * 0,7", want: "2025-01-19 00:00"},
		{expr: "0 0 * * SUN", want: "2025-01-19 00:00"},
		{expr: "0 0 * * sun", want: "2025-01-19 00:00"},
		{expr: "0 0 * * 0-7", want: "2025-01-16 00:00"},
		{expr: "0 0 * * 5-7", want: "2025-01-17 00:00"},
		{expr: "0 0 * * 6,0", want: "2025-01-18 00:00"},
		{expr: "0 0 * * 1-5", want: "2025-01-16 00:00"},
		{expr: "0 0 * * Mon-Fri", want: "2025-01-16 00:00"},
		{expr: "0 0 * * MON-fri", want: "2025-01-16 00:00"},
		{expr: "0 0 * * */2", want: "2025-01-16 00:00"},   // Sun Tue Thu Sat
		{expr: "0 0 * * 1/2", want: "2025-01-17 00:00"},   // Mon Wed Fri
		{expr: "0 0 * * 5-7/2", want: "2025-01-17 00:00"}, // Fri Sun
		{expr: "0 0 * * 1-7/3", want: "2025-01-16 00:00"}, // Mon Thu Sun
		// Month names in any case.
		{expr: "0 0 1 jan *", want: "2026-01-01 00:00"},
		{expr: "0 0 1 JAN-MAR *", want: "2025-02-01 00:00"},
		{expr: "0 0 1 Jun,Dec *", want: "2025-06-01 00:00"},
		{expr: "0 0 * DEC,jan *", want: "2025-01-16 00:00"},
		{expr: "0 0 * feb mon", want: "2025-02-03 00:00"},
		{expr: "0 0 * jAn-MAR sAt", want: "2025-01-18 00:00"},
		// Day-or-weekday: both restricted, either matches.
		{expr: "0 0 13 * 5", want: "2025-01-17 00:00"},
		{expr: "0 0 18 * 1", want: "2025-01-18 00:00"},
		{expr: "0 0 15 1 3", want: "2025-01-22 00:00"},
		{expr: "0 0 1,15 * 5", want: "2025-01-17 00:00"},
		{expr: "0 0 1-30/7 * 1", want: "2025-01-20 00:00"},
		{expr: "0 0 30 2 0", want: "2025-02-02 00:00"},
		{expr: "0 0 29 2 2", want: "2025-02-04 00:00"},
		// Day-or-weekday: one starts with '*', both must match.
		{expr: "0 0 */7 * 1", want: "2025-09-01 00:00"},
		{expr: "0 0 1 * */2", want: "2025-02-01 00:00"},
		{expr: "0 0 */10 * */7", want: "2025-05-11 00:00"}, // day 1, 11, 21 or 31 on a Sunday
		// Macros.
		{expr: "@hourly", want: "2025-01-15 11:00"},
		{expr: "@daily", want: "2025-01-16 00:00"},
		{expr: "@DAILY", want: "2025-01-16 00:00"},
		{expr: "@midnight", want: "2025-01-16 00:00"},
		{expr: "@weekly", want: "2025-01-19 00:00"},
		{expr: "@monthly", want: "2025-02-01 00:00"},
		{expr: "@yearly", want: "2026-01-01 00:00"},
		{expr: "@annually", want: "2026-01-01 00:00"},
		{expr: " @Hourly ", want: "2025-01-15 11:00"},
		// Leap days, and expressions that never fire.
		{expr: "0 0 29 2 *", want: "2028-02-29 00:00"},
		{expr: "0 0 29,30 2 *", want: "2028-02-29 00:00"},
		{expr: "0 0 29 2 */7", want: "2032-02-29 00:00"}, // a Sunday 29 February
		{expr: "0 0 29 2 *", from: utc("2096-03-01 00:00"), want: "2104-02-29 00:00"},
		{expr: "0 0 * * *", from: utc("2028-02-28 23:59"), want: "2028-02-29 00:00"},
		{expr: "0 0 * * *", from: utc("2100-02-28 12:00"), want: "2100-03-01 00:00"},
		{expr: "0 0 30 2 *", want: ""},
		{expr: "0 0 30,31 feb *", want: ""},
		{expr: "0 0 31 4,6,9,11 *", want: ""},
		{expr: "0 0 31 4 */7", want: ""},
		{expr: "0 0 29 2 *", from: utc("9996-03-01 00:00"), want: ""}, // past year 9999
		// Boundaries of the starting time.
		{expr: "0 0 1 1 *", from: time.Date(2025, 12, 31, 23, 59, 59, 999, time.UTC), want: "2026-01-01 00:00"},
		{expr: "* * * * *", from: time.Date(2025, 1, 15, 10, 30, 59, 999999999, time.UTC), want: "2025-01-15 10:31"},
		{expr: "* * * * *", from: utc("2025-01-15 10:31"), want: "2025-01-15 10:32"},
		{expr: "0 0 1 1 *", from: utc("1969-06-01 00:00"), want: "1970-01-01 00:00"},
	}
	for _, tt := range tests {
		c, err := ParseCron(tt.expr)
		if err != nil {
			t.Errorf("ParseCron(%q) = %v", tt.expr, err)
			continue
		}
		from := tt.from
		if from.IsZero() {
			from = start
		}
		got, ok := c.Next(from)
		switch {
		case tt.want == "" && ok:
			t.Errorf("ParseCron(%q).Next(%s) = %s; want never", tt.expr, from, got)
		case tt.want != "" && !ok:
			t.Errorf("ParseCron(%q).Next(%s) = never; want %s", tt.expr, from, tt.want)
		case tt.want != "" && (!got.Equal(utc(tt.want)) || got.Location() != from.Location()):
			t.Errorf("ParseCron(%q).Next(%s) = %s; want %s UTC", tt.expr, from, got, tt.want)
		}
	}
}

// TestCronNextZones checks wall-clock reading in the caller's location and
// the Vixie cron handling of daylight-saving changes.
func TestCronNextZones(t *testing.T) {
	t.Parallel()
	ny, santiago, kolkata := zone("America/New_York"), zone("America/Santiago"), zone("Asia/Kolkata")
	tests := []struct {
		expr string
		from time.Time
		want string // UTC
	}{
		{"0 9 * * *", start.In(kolkata), "2025-01-16 03:30"}, // 09:00 IST
		{"0 9 * * *", start.In(ny), "2025-01-15 14:00"},      // 09:00 EST
		// New York springs forward on 9 March 2025: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"30 2 * * *", time.Date(2025, 3, 9, 1, 0, 0, 0, ny), "2025-03-09 07:00"},   // fixed: fires at the change
		{"30 2 * * *", time.Date(2025, 3, 9, 3, 0, 0, 0, ny), "2025-03-10 06:30"},   // and not again
		{"0,30 2 * * *", time.Date(2025, 3, 9, 1, 0, 0, 0, ny), "2025-03-09 07:00"}, // once for both
		{"0 3 * * *", time.Date(2025, 3, 9, 1, 0, 0, 0, ny), "2025-03-09 07:00"},
		{"30 * * * *", time.Date(2025, 3, 9, 1, 45, 0, 0, ny), "2025-03-09 07:30"}, // wildcard hour: 03:30 EDT
		{"*/30 * * * *", time.Date(2025, 3, 9, 1, 45, 0, 0, ny), "2025-03-09 07:00"},
		{"* * * * *", time.Date(2025, 3, 9, 1, 59, 0, 0, ny), "2025-03-09 07:00"},
		// New York falls back on 2 November 2025: 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"30 1 * * *", time.Date(2025, 11, 2, 0, 0, 0, 0, ny), "2025-11-02 05:30"},  // 01:30 EDT
		{"30 1 * * *", time.Date(2025, 11, 2, 1, 30, 0, 0, ny), "2025-11-03 06:30"}, // not 01:30 EST
		{"30 1 * * *", time.Date(2025, 11, 2, 6, 10, 0, 0, time.UTC).In(ny), "2025-11-03 06:30"},
		{"0 2 * * *", time.Date(2025, 11, 2, 1, 30, 0, 0, ny), "2025-11-02 07:00"},        // 02:00 EST
		{"30 * * * *", time.Date(2025, 11, 2, 1, 30, 0, 0, ny), "2025-11-02 06:30"},       // wildcard: 01:30 EST too
		{"* * * * *", time.Date(2025, 11, 2, 1, 59, 0, 0, ny), "2025-11-02 06:00"},        // 01:00 EST
		{"0 12 21 * *", time.Date(2025, 9, 5, 12, 0, 0, 0, santiago), "2025-09-21 15:00"}, // gronx gives up here
		// Santiago springs forward at midnight on 7 September 2025 (04:00 UTC).
		{"0 0 * * *", time.Date(2025, 9, 6, 12, 0, 0, 0, santiago), "2025-09-07 04:00"},
		{"0 0 * * *", time.Date(2025, 9, 7, 1, 0, 0, 0, santiago), "2025-09-08 03:00"},
	}
	for _, tt := range tests {
		c, err := ParseCron(tt.expr)
		if err != nil {
			t.Fatalf("ParseCron(%q) = %v", tt.expr, err)
		}
		got, ok := c.Next(tt.from)
		if !ok || !got.Equal(utc(tt.want)) || got.Location() != tt.from.Location() {
			t.Errorf("ParseCron(%q).Next(%s) = %s, %v; want %s UTC in %s", tt.expr, tt.from, got, ok, tt.want, tt.from.Location())
		}
	}
}

func TestParseCronRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, part string
	}{
		{"", ""},
		{"   ", ""},
		{"* * * *", ""},
		{"0 * * * * *", ""},    // seconds
		{"0 0 * * * 2025", ""}, // year
		{"0 0 0 * * * 2025", ""},
		{"@reboot", ""},
		{"@every 5m", ""},
		{"@fortnightly", ""},
		{"@daily 5", ""},
		{"60 * * * *", "minute"},
		{"-1 * * * *", "minute"},
		{"99999999999999999999 * * * *", "minute"},
		{"1.5 * * * *", "minute"},
		{"** * * * *", "minute"},
		{"*/0 * * * *", "minute"},
		{"*/ * * * *", "minute"},
		{"*/x * * * *", "minute"},
		{"*/60 * * * *", "minute"},
		{"/5 * * * *", "minute"},
		{"5-1 * * * *", "minute"},
		{"1,,2 * * * *", "minute"},
		{",1 * * * *", "minute"},
		{"1, * * * *", "minute"},
		{"1-2-3 * * * *", "minute"},
		{"*-5 * * * *", "minute"},
		{"1- * * * *", "minute"},
		{"1/2/3 * * * *", "minute"},
		{"0\u00a00 * * * *", "minute"}, // only spaces and tabs separate fields
		{"0\v0 1 1 MON", ""},
		{"* 24 * * *", "hour"},
		{"* */24 * * *", "hour"},
		{"* MON * * *", "hour"},
		{"* * 0 * *", "day"},
		{"* * 32 * *", "day"},
		{"* * L * *", "day"},
		{"* * 15W * *", "day"},
		{"* * LW * *", "day"},
		{"* * ? * *", "day"},
		{"* * jan * *", "day"},
		{"* * * 0 *", "month"},
		{"* * * 13 *", "month"},
		{"* * * MON *", "month"},
		{"* * * sun *", "month"},
		{"* * * JANUARY *", "month"},
		{"* * * 1-13 *", "month"},
		{"* * * * 8", "weekday"},
		{"* * * * -1", "weekday"},
		{"* * * * 5L", "weekday"},
		{"* * * * 1#2", "weekday"},
		{"* * * * ?", "weekday"},
		{"* * * * JAN", "weekday"},
		{"* * * * MONDAY", "weekday"},
		{"* * * * FRI-MON", "weekday"},
		{"* * * * 7/2", "weekday"},
		{"* * * * 1/8", "weekday"},
		{"* * * * sun-", "weekday"},
	}
	for _, tt := range tests {
		c, err := ParseCron(tt.expr)
		var ce *CronError
		if !errors.As(err, &ce) {
			t.Errorf("ParseCron(%q) = %v, %v; want a *CronError", tt.expr, c, err)
			continue
		}
		if ce.Part != tt.part || ce.Reason == "" {
			t.Errorf("ParseCron(%q) error part %q (%v); want %q", tt.expr, ce.Part, err, tt.part)
		}
		if tt.part != "" && !strings.HasPrefix(err.Error(), tt.part+" field: ") {
			t.Errorf("ParseCron(%q) error %q; want it to name the %s field", tt.expr, err, tt.part)
		}
	}
}

func TestParseCronMessages(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"* 24 * * *", "hour field: 24 is out of range 0-23"},
		{"* * * * JAN", `weekday field: "JAN" is a month name, not a weekday`},
		{"0 0 * * * *", "has 6 fields; want five: minute hour day month weekday (seconds and year fields are not supported)"},
		{"* * L * *", `day field: "L": L and W (last day, nearest weekday) are not supported`},
	}
	for _, tt := range tests {
		_, err := ParseCron(tt.expr)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseCron(%q) = %v; want %q", tt.expr, err, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	runAt := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		cfg  map[string]any
		want Spec // Cron is compared by its text
		expr string
	}{
		{"interval", map[string]any{"mode": "interval", "interval_secs": 60.0}, Spec{Kind: KindInterval, Interval: time.Minute}, ""},
		{"interval text", map[string]any{"mode": "interval", "interval_secs": " 30 "}, Spec{Kind: KindInterval, Interval: 30 * time.Second}, ""},
		{"interval int", map[string]any{"mode": "interval", "interval_secs": 3600}, Spec{Kind: KindInterval, Interval: time.Hour}, ""},
		{"interval whole float", map[string]any{"mode": "interval", "interval_secs": 90.0}, Spec{Kind: KindInterval, Interval: 90 * time.Second}, ""},
		{"interval default", map[string]any{"mode": "interval"}, Spec{Kind: KindInterval, Interval: time.Minute}, ""},
		{"interval blank", map[string]any{"mode": "interval", "interval_secs": " "}, Spec{Kind: KindInterval, Interval: time.Minute}, ""},
		{"nothing set", map[string]any{}, Spec{Kind: KindInterval, Interval: time.Minute}, ""},
		{"nil config", nil, Spec{Kind: KindInterval, Interval: time.Minute}, ""},
		{"interval minimum", map[string]any{"mode": "interval", "interval_secs": 10.0}, Spec{Kind: KindInterval, Interval: 10 * time.Second}, ""},
		{"interval below minimum", map[string]any{"mode": "interval", "interval_secs": 5.0}, Spec{Kind: KindInterval, Interval: MinInterval}, ""},
		{"interval 9", map[string]any{"mode": "interval", "interval_secs": 9}, Spec{Kind: KindInterval, Interval: MinInterval}, ""},
		{"interval zero", map[string]any{"mode": "interval", "interval_secs": 0.0}, Spec{Kind: KindInterval, Interval: MinInterval}, ""},
		{"interval negative", map[string]any{"mode": "interval", "interval_secs": "-30"}, Spec{Kind: KindInterval, Interval: MinInterval}, ""},
		{"interval huge", map[string]any{"mode": "interval", "interval_secs": 1e300}, Spec{Kind: KindInterval, Interval: time.Duration(maxIntervalSecs) * time.Second}, ""},
		{"mode any case", map[string]any{"mode": " CRON ", "cron_expr": "@daily"}, Spec{Kind: KindCron}, "@daily"},
		{"other modes' fields ignored", map[string]any{"mode": "cron", "cron_expr": "0 9 * * 1-5", "interval_secs": "abc", "run_at": "never"}, Spec{Kind: KindCron}, "0 9 * * 1-5"},
		{"inferred interval", map[string]any{"interval_secs": 20.0}, Spec{Kind: KindInterval, Interval: 20 * time.Second}, ""},
		{"inferred cron", map[string]any{"mode": "", "cron_expr": "*/5 * * * *", "run_at": " "}, Spec{Kind: KindCron}, "*/5 * * * *"},
		{"inferred once", map[string]any{"mode": nil, "run_at": "2025-06-01T09:30:00Z"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"cron trimmed", map[string]any{"mode": "cron", "cron_expr": "  0 0 * * *\n"}, Spec{Kind: KindCron}, "0 0 * * *"},
		{"once Z", map[string]any{"mode": "once", "run_at": "2025-06-01T09:30:00Z"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once offset", map[string]any{"mode": "once", "run_at": "2025-06-01T11:30:00+02:00"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once offset no colon", map[string]any{"mode": "once", "run_at": "2025-06-01T04:30:00-0500"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once no offset is UTC", map[string]any{"mode": "once", "run_at": "2025-06-01T09:30:00"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once space, no seconds", map[string]any{"mode": "once", "run_at": "2025-06-01 09:30"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once lower case", map[string]any{"mode": "once", "run_at": "2025-06-01t09:30:00z"}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
		{"once fraction", map[string]any{"mode": "once", "run_at": "2025-06-01T09:30:00.250Z"}, Spec{Kind: KindOnce, RunAt: runAt.Add(250 * time.Millisecond)}, ""},
		{"once time value", map[string]any{"mode": "once", "run_at": runAt.In(zone("Asia/Tokyo"))}, Spec{Kind: KindOnce, RunAt: runAt}, ""},
	}
	for _, tt := range tests {
		s, err := Parse(tt.cfg)
		if err != nil {
			t.Errorf("%s: Parse(%v) = %v", tt.name, tt.cfg, err)
			continue
		}
		got := *s
		expr := ""
		if got.Cron != nil {
			expr = got.Cron.String()
		}
		got.Cron = nil
		if got != tt.want || expr != tt.expr || (s.Kind == KindOnce && s.RunAt.Location() != time.UTC) {
			t.Errorf("%s: Parse(%v) = %+v with cron %q; want %+v with cron %q (RunAt in UTC)", tt.name, tt.cfg, got, expr, tt.want, tt.expr)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   map[string]any
		field string
	}{
		{"mode unknown", map[string]any{"mode": "weekly", "cron_expr": "@weekly"}, "mode"},
		{"mode not text", map[string]any{"mode": 5.0}, "mode"},
		{"mode ambiguous", map[string]any{"cron_expr": "@daily", "run_at": "2025-06-01T09:30:00Z"}, "mode"},
		{"interval fraction", map[string]any{"mode": "interval", "interval_secs": 12.5}, "interval_secs"},
		{"interval fraction text", map[string]any{"mode": "interval", "interval_secs": "10.5"}, "interval_secs"},
		{"interval text", map[string]any{"mode": "interval", "interval_secs": "ten"}, "interval_secs"},
		{"interval bool", map[string]any{"mode": "interval", "interval_secs": true}, "interval_secs"},
		{"interval NaN", map[string]any{"mode": "interval", "interval_secs": "NaN"}, "interval_secs"},
		{"interval expression", map[string]any{"mode": "interval", "interval_secs": "{{ $vars.n }}"}, "interval_secs"},
		{"cron missing", map[string]any{"mode": "cron"}, "cron_expr"},
		{"cron not text", map[string]any{"mode": "cron", "cron_expr": 5.0}, "cron_expr"},
		{"cron invalid", map[string]any{"mode": "cron", "cron_expr": "0 24 * * *"}, "cron_expr"},
		{"cron never fires", map[string]any{"mode": "cron", "cron_expr": "0 0 30 2 *"}, "cron_expr"},
		{"cron expression", map[string]any{"mode": "cron", "cron_expr": "{{ $vars.cron }}"}, "cron_expr"},
		{"once missing", map[string]any{"mode": "once"}, "run_at"},
		{"once not a time", map[string]any{"mode": "once", "run_at": "tomorrow"}, "run_at"},
		{"once date only", map[string]any{"mode": "once", "run_at": "2025-06-01"}, "run_at"},
		{"once bad month", map[string]any{"mode": "once", "run_at": "2025-13-01T00:00:00Z"}, "run_at"},
		{"once number", map[string]any{"mode": "once", "run_at": 1748770200.0}, "run_at"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.cfg)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: Parse(%v) = %+v, %v; want a *FieldError", tt.name, tt.cfg, s, err)
			continue
		}
		if fe.Field != tt.field || fe.Code != "INVALID_CONFIG" || !strings.HasPrefix(err.Error(), tt.field+": ") {
			t.Errorf("%s: Parse(%v) = %q (field %q, code %q); want field %q, INVALID_CONFIG", tt.name, tt.cfg, err, fe.Field, fe.Code, tt.field)
		}
	}
	// A cron_expr error carries the cron field at fault.
	_, err := Parse(map[string]any{"mode": "cron", "cron_expr": "0 24 * * *"})
	var ce *CronError
	if !errors.As(err, &ce) || ce.Part != "hour" || err.Error() != "cron_expr: hour field: 24 is out of range 0-23" {
		t.Errorf("Parse(cron_expr 0 24 * * *) = %v; want cron_expr: hour field: 24 is out of range 0-23", err)
	}
}

func TestSpecNextInterval(t *testing.T) {
	t.Parallel()
	s := &Spec{Kind: KindInterval, Interval: time.Minute}
	now := start
	tests := []struct {
		name      string
		prev      time.Time
		want      time.Time
		wantPhase bool // only check phase and bounds
	}{
		{name: "first fire", want: now.Add(time.Minute)},
		{name: "rolling", prev: now.Add(-10 * time.Second), want: now.Add(50 * time.Second)},
		{name: "due now is not after now", prev: now.Add(-time.Minute), want: now.Add(time.Minute)},
		{name: "missed slots skipped", prev: now.Add(-150 * time.Second), want: now.Add(30 * time.Second)},
		{name: "clock went back", prev: now.Add(30 * time.Second), want: now.Add(90 * time.Second)},
		{name: "long gap", prev: time.Date(1700, 1, 1, 0, 0, 7, 0, time.UTC), wantPhase: true},
	}
	for _, tt := range tests {
		got, ok := s.Next(tt.prev, now)
		if !ok {
			t.Errorf("%s: Next(%s, %s) = never", tt.name, tt.prev, now)
			continue
		}
		if tt.wantPhase {
			if !got.After(now) || got.Sub(now) > time.Minute || got.Second() != 7 {
				t.Errorf("%s: Next(%s, %s) = %s; want the first :07 after now", tt.name, tt.prev, now, got)
			}
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("%s: Next(%s, %s) = %s; want %s", tt.name, tt.prev, now, got, tt.want)
		}
	}
	// Times are given in now's location.
	tokyo := zone("Asia/Tokyo")
	if got, _ := s.Next(start, start.In(tokyo)); got.Location() != tokyo {
		t.Errorf("Next in Tokyo = %s; want Asia/Tokyo", got)
	}
	// A parsed 5-second interval fires every 10 seconds.
	p, err := Parse(map[string]any{"mode": "interval", "interval_secs": 5.0})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Next(now, now); !got.Equal(now.Add(10 * time.Second)) {
		t.Errorf("Next for interval_secs 5 = %s; want %s", got, now.Add(10*time.Second))
	}
}

func TestSpecNextCronAndOnce(t *testing.T) {
	t.Parallel()
	daily, err := Parse(map[string]any{"mode": "cron", "cron_expr": "0 9 * * *"})
	if err != nil {
		t.Fatal(err)
	}
	runAt := start.Add(time.Hour)
	once := &Spec{Kind: KindOnce, RunAt: runAt}
	ny := zone("America/New_York")
	tests := []struct {
		name      string
		s         *Spec
		prev, now time.Time
		want      time.Time // zero means never
	}{
		{"cron first", daily, time.Time{}, start, utc("2025-01-16 09:00")},
		{"cron after prev", daily, utc("2025-01-16 09:00"), utc("2025-01-16 09:00"), utc("2025-01-17 09:00")},
		{"cron clock went back", daily, utc("2025-01-16 09:00"), utc("2025-01-16 08:59"), utc("2025-01-17 09:00")},
		{"cron reads now's zone", daily, time.Time{}, start.In(ny), utc("2025-01-15 14:00")},
		{"once ahead", once, time.Time{}, start, runAt},
		{"once ahead, zoned now", once, time.Time{}, start.In(ny), runAt},
		{"once at now", once, time.Time{}, runAt, time.Time{}},
		{"once past", once, time.Time{}, runAt.Add(time.Second), time.Time{}},
		{"once fired", once, runAt, start, time.Time{}},
		{"zero spec", &Spec{}, time.Time{}, start, time.Time{}},
		{"zero cron", &Spec{Kind: KindCron, Cron: &Cron{}}, time.Time{}, start, time.Time{}},
		{"interval zero", &Spec{Kind: KindInterval}, time.Time{}, start, time.Time{}},
	}
	for _, tt := range tests {
		got, ok := tt.s.Next(tt.prev, tt.now)
		if ok != !tt.want.IsZero() || !got.Equal(tt.want) || (ok && got.Location() != tt.now.Location()) {
			t.Errorf("%s: Next(%s, %s) = %s, %v; want %s in %s", tt.name, tt.prev, tt.now, got, ok, tt.want, tt.now.Location())
		}
	}
}

// matches reports whether the fields match t's wall clock.
func (c *Cron) matches(t time.Time) bool {
	y, mo, d := t.Date()
	return t.Second() == 0 && c.minute&(1<<t.Minute()) != 0 && c.hour&(1<<t.Hour()) != 0 &&
		c.month&(1<<int(mo)) != 0 && c.dayMatches(int64(y), int(mo), d)
}

// gronxExpr returns c as gronx reads it, or false where gronx differs from
// spec/nodes.md: it has no @midnight, and it treats a weekday list starting
// "*," as restricted.
func gronxExpr(c *Cron) (string, bool) {
	e := c.String()
	if five, ok := macros[strings.ToLower(e)]; ok {
		return five, true
	}
	f := strings.Fields(e)
	return e, !strings.HasPrefix(f[4], "*,")
}

func randomField(r *rand.Rand, lo, hi int) string {
	n := 1 + r.IntN(2)
	items := make([]string, 0, n)
	for range n {
		a := lo + r.IntN(hi-lo+1)
		b := a + r.IntN(hi-a+1)
		step := 1 + r.IntN(hi)
		switch r.IntN(7) {
		case 0:
			items = append(items, "*")
		case 1:
			items = append(items, fmt.Sprintf("*/%d", step))
		case 2, 3:
			items = append(items, strconv.Itoa(a))
		case 4:
			items = append(items, fmt.Sprintf("%d-%d", a, b))
		case 5:
			items = append(items, fmt.Sprintf("%d-%d/%d", a, b, step))
		case 6:
			if lo == 0 && hi == 7 && a == 7 {
				a = 0
			}
			items = append(items, fmt.Sprintf("%d/%d", a, step))
		}
	}
	return strings.Join(items, ",")
}

func randomExpr(r *rand.Rand) string {
	f := []string{randomField(r, 0, 59), randomField(r, 0, 23), randomField(r, 1, 31), randomField(r, 1, 12), randomField(r, 0, 7)}
	for i := range f {
		if r.IntN(3) == 0 {
			f[i] = "*"
		}
	}
	return strings.Join(f, " ")
}

// TestNextAgreesWithGronx compares Next with gronx's independent
// implementation on random expressions in UTC, where gronx is reliable.
func TestNextAgreesWithGronx(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	compared := 0
	for range 3000 {
		expr := randomExpr(r)
		c, err := ParseCron(expr)
		if err != nil {
			t.Fatalf("ParseCron(%q) = %v", expr, err)
		}
		ge, ok := gronxExpr(c)
		if !ok {
			continue
		}
		from := time.Date(2024+r.IntN(4), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), 0, 0, time.UTC)
		got, ok := c.Next(from)
		if ok && (!got.After(from) || !c.matches(got)) {
			t.Errorf("ParseCron(%q).Next(%s) = %s; not a matching time after it", expr, from, got)
		}
		if ok {
			if due, err := gronx.New().IsDue(ge, got); err != nil || !due {
				t.Errorf("ParseCron(%q).Next(%s) = %s; gronx says not due (%v)", expr, from, got, err)
			}
		}
		want, err := gronx.NextTickAfter(ge, from, false)
		if err != nil {
			continue // gronx gave up; the IsDue check above still applies
		}
		compared++
		if !ok || !got.Equal(want) {
			t.Errorf("ParseCron(%q).Next(%s) = %s, %v; gronx says %s", expr, from, got, ok, want)
		}
	}
	if compared < 2000 {
		t.Errorf("compared only %d expressions with gronx", compared)
	}
}

// bruteNext steps minute by minute from after through limit, following the
// daylight-saving rules of Cron.Next. It returns false if nothing fires.
func bruteNext(c *Cron, after, limit time.Time) (time.Time, bool) {
	loc := after.Location()
	fixed := !c.minuteStar && !c.hourStar
	t := after.Truncate(time.Minute)
	for t = t.Add(time.Minute); !t.After(limit); t = t.Add(time.Minute) {
		lt := t.In(loc)
		_, off := lt.Zone()
		_, prevOff := lt.Add(-time.Minute).Zone()
		if fixed && off > prevOff {
			// t ends a skipped stretch of wall time: fire if a skipped time matches.
			wall := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), 0, 0, time.UTC)
			for w := wall.Add(time.Duration(prevOff-off) * time.Second); w.Before(wall); w = w.Add(time.Minute) {
				if c.matches(w) {
					return lt, true
				}
			}
		}
		if !c.matches(lt) {
			continue
		}
		if fixed {
			// Skip a wall time this zone has already shown in the last few hours.
			repeat := false
			for back := time.Minute; back <= 3*time.Hour; back += time.Minute {
				e := lt.Add(-back)
				if e.Hour() == lt.Hour() && e.Minute() == lt.Minute() && e.Day() == lt.Day() {
					repeat = true
					break
				}
			}
			if repeat {
				continue
			}
		}
		return lt, true
	}
	return time.Time{}, false
}

// TestNextAcrossDaylightSaving compares Next with minute stepping around
// daylight-saving changes in zones that move at 02:00, at midnight, by half
// an hour, and never.
func TestNextAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	changes := []time.Time{
		time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC).In(zone("America/New_York")),
		time.Date(2025, 11, 2, 6, 0, 0, 0, time.UTC).In(zone("America/New_York")),
		time.Date(2025, 3, 30, 1, 0, 0, 0, time.UTC).In(zone("Europe/Berlin")),
		time.Date(2025, 10, 26, 1, 0, 0, 0, time.UTC).In(zone("Europe/Berlin")),
		time.Date(2025, 9, 7, 4, 0, 0, 0, time.UTC).In(zone("America/Santiago")),
		time.Date(2025, 4, 6, 3, 0, 0, 0, time.UTC).In(zone("America/Santiago")),
		time.Date(2025, 4, 5, 15, 0, 0, 0, time.UTC).In(zone("Australia/Lord_Howe")),
		time.Date(2025, 10, 4, 15, 30, 0, 0, time.UTC).In(zone("Australia/Lord_Howe")),
		time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC).In(zone("Asia/Kathmandu")),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1500 {
		change := changes[r.IntN(len(changes))]
		f := []string{randomField(r, 0, 59), randomField(r, 0, 23), "*", "*", "*"}
		if r.IntN(2) == 0 {
			f[0] = strconv.Itoa(r.IntN(60))
		}
		if r.IntN(3) == 0 {
			f[1] = "*"
		}
		if r.IntN(4) == 0 {
			f[4] = randomField(r, 0, 7)
		}
		expr := strings.Join(f, " ")
		c, err := ParseCron(expr)
		if err != nil {
			t.Fatalf("ParseCron(%q) = %v", expr, err)
		}
		from := change.Add(time.Duration(r.IntN(6*60)-5*60) * time.Minute)
		limit := change.Add(48 * time.Hour)
		want, wantOK := bruteNext(c, from, limit)
		got, ok := c.Next(from)
		if !wantOK {
			if ok && !got.After(limit) {
				t.Errorf("ParseCron(%q).Next(%s) = %s; minute stepping finds nothing before %s", expr, from, got, limit)
			}
			continue
		}
		if !ok || !got.Equal(want) {
			t.Errorf("ParseCron(%q).Next(%s) = %s, %v; minute stepping says %s", expr, from, got, ok, want)
		}
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{
		"* * * * *", "*/15 9-17 * * MON-FRI", "0 0 29 2 *", "0 0 30 2 *", "@midnight", "@every 1h",
		"0 0 1-30/7 * 1", "5,10-20/3 */2 L * 5#2", "0 0 * * 7", "0 0 13 * FRI", "1 2 3 4 5 6",
		"0 12 * jan-mar sun-sat", "* * * * 7/2", "0 0 */10 * */7",
	} {
		f.Add(s)
	}
	ny := zone("America/New_York")
	starts := []time.Time{start, time.Date(2025, 3, 9, 1, 30, 0, 0, ny), time.Date(2025, 11, 2, 1, 30, 0, 0, ny)}
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := ParseCron(expr)
		if err != nil {
			var ce *CronError
			if !errors.As(err, &ce) || ce.Reason == "" {
				t.Fatalf("ParseCron(%q) = %v; want a *CronError with a reason", expr, err)
			}
			switch ce.Part {
			case "", "minute", "hour", "day", "month", "weekday":
			default:
				t.Fatalf("ParseCron(%q) names part %q", expr, ce.Part)
			}
			return
		}
		for _, from := range starts {
			got, ok := c.Next(from)
			if !ok {
				if !c.never && from.Location() == time.UTC {
					t.Fatalf("ParseCron(%q).Next(%s) = never, though the fields allow a date", expr, from)
				}
				continue
			}
			if !got.After(from) || got.Location() != from.Location() {
				t.Fatalf("ParseCron(%q).Next(%s) = %s; want a later time in the same zone", expr, from, got)
			}
			if from.Location() != time.UTC {
				continue
			}
			if !c.matches(got) {
				t.Fatalf("ParseCron(%q).Next(%s) = %s, which the fields do not match", expr, from, got)
			}
			if ge, ok := gronxExpr(c); ok {
				if due, err := gronx.New().IsDue(ge, got); err != nil || !due {
					t.Fatalf("ParseCron(%q).Next(%s) = %s; gronx says not due (%v)", expr, from, got, err)
				}
			}
			// Nothing matches in between (checked over the first two days).
			for m := from.Add(time.Minute); m.Before(got) && m.Before(from.Add(48*time.Hour)); m = m.Add(time.Minute) {
				if c.matches(m) {
					t.Fatalf("ParseCron(%q).Next(%s) = %s, but %s matches", expr, from, got, m)
				}
			}
		}
	})
}

func BenchmarkCronNext(b *testing.B) {
	exprs := []string{
		"* * * * *", "*/5 * * * *", "0 9 * * 1-5", "30 2 * * *", "0 0 1 * *", "@daily",
		"0 0 13 * 5", "0 0 */7 * 1", "15 10 * jan,jul *", "0 0 29 2 *",
	}
	crons := make([]*Cron, len(exprs))
	for i, e := range exprs {
		c, err := ParseCron(e)
		if err != nil {
			b.Fatal(err)
		}
		crons[i] = c
	}
	for _, loc := range []*time.Location{time.UTC, zone("America/New_York")} {
		b.Run(loc.String(), func(b *testing.B) {
			from := start.In(loc)
			i := 0
			for b.Loop() {
				if _, ok := crons[i%len(crons)].Next(from); !ok {
					b.Fatal("never")
				}
				i++
			}
		})
	}
}

// BenchmarkCronNext10000Jobs is one scheduler pass: the next fire of
// 10,000 jobs.
func BenchmarkCronNext10000Jobs(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var crons []*Cron
	for len(crons) < 10000 {
		c, err := ParseCron(randomExpr(r))
		if err != nil {
			b.Fatal(err)
		}
		if !c.never {
			crons = append(crons, c)
		}
	}
	from := start.In(zone("Europe/Berlin"))
	for b.Loop() {
		for _, c := range crons {
			c.Next(from)
		}
	}
}
