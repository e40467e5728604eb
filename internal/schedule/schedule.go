// Package schedule reads the Schedule trigger's config (spec/nodes.md,
// "Schedule") and computes when it fires next. It is pure: no goroutines,
// no I/O and no clock; the scheduler passes the current time in.
//
// A Spec is one of three modes: interval (every interval_secs seconds,
// at least 10), cron (a five-field cron expression, see ParseCron) or once
// (at run_at, a UTC instant).
package schedule

import (
	"math"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/value"
)

// Kinds of Schedule trigger: the values of its mode field, and the
// scheduler's trigger_type for it.
const (
	KindInterval = "interval"
	KindCron     = "cron"
	KindOnce     = "once"
)

// MinIntervalSecs is the shortest interval in seconds: lower interval_secs
// values are raised to it (spec/nodes.md).
const MinIntervalSecs = 10

// MinInterval is MinIntervalSecs as a duration.
const MinInterval = MinIntervalSecs * time.Second

// DefaultIntervalSecs is the interval a blank interval_secs stands for.
// spec/nodes.md gives no default; this matches the Schedule node's field.
const DefaultIntervalSecs = 60

// maxIntervalSecs is the longest interval time.Duration holds (about 292
// years); larger values are lowered to it.
const maxIntervalSecs = math.MaxInt64 / int64(time.Second)

// Spec is a parsed Schedule trigger: Kind (the config's mode) says which
// one of Interval, Cron or RunAt applies.
type Spec struct {
	Kind     string        // KindInterval, KindCron or KindOnce
	Interval time.Duration // interval mode: at least MinInterval
	Cron     *Cron         // cron mode
	RunAt    time.Time     // once mode, in UTC
}

// FieldError is a Schedule config Parse rejects. Field is the config field
// at fault (mode, interval_secs, cron_expr or run_at) and Code is always
// INVALID_CONFIG (rule 3 of spec/nodes.md; the Schedule trigger lists no
// codes of its own). Err is the underlying *CronError for cron_expr.
type FieldError struct {
	Field  string
	Code   string
	Reason string
	Err    error
}

// Error returns "<field>: <reason>".
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the underlying error, if any.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldError(field, reason string, err error) *FieldError {
	return &FieldError{Field: field, Code: "INVALID_CONFIG", Reason: reason, Err: err}
}

// modeField maps each mode to the config field it reads.
var modeField = [...]struct{ mode, field string }{
	{KindInterval, "interval_secs"},
	{KindCron, "cron_expr"},
	{KindOnce, "run_at"},
}

// Parse reads a Schedule node's config (JSON decoded into map[string]any).
// mode is interval, cron or once (any case). When mode is blank it is
// inferred from the one field of interval_secs, cron_expr and run_at that is
// set, and is interval when none is; fields of the other modes are ignored.
// Rules:
//
//   - interval_secs: a whole number, or text holding one; blank means 60,
//     values below 10 are raised to 10.
//   - cron_expr: see ParseCron; an expression that can never fire
//     (0 0 30 2 *) is rejected too.
//   - run_at: an ISO 8601 / RFC 3339 date and time (T or space between
//     them, seconds and fractions optional). An offset or Z is honoured;
//     without one the time is read as UTC. RunAt is returned in UTC.
//
// Double-brace expressions are not evaluated in a schedule and are
// rejected. Any failure is a *FieldError naming the field.
func Parse(cfg map[string]any) (*Spec, error) {
	mode, err := readMode(cfg)
	if err != nil {
		return nil, err
	}
	s := &Spec{Kind: mode}
	switch mode {
	case KindInterval:
		s.Interval, err = readInterval(cfg["interval_secs"])
	case KindCron:
		s.Cron, err = readCron(cfg["cron_expr"])
	case KindOnce:
		s.RunAt, err = readRunAt(cfg["run_at"])
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func readMode(cfg map[string]any) (string, error) {
	v := cfg["mode"]
	if value.Blank(v) {
		mode := ""
		for _, mf := range modeField {
			if value.Blank(cfg[mf.field]) {
				continue
			}
			if mode != "" {
				return "", fieldError("mode", "is required when more than one of interval_secs, cron_expr and run_at is set", nil)
			}
			mode = mf.mode
		}
		if mode == "" {
			return KindInterval, nil
		}
		return mode, nil
	}
	s, _ := v.(string)
	s = strings.ToLower(strings.TrimSpace(s))
	for _, mf := range modeField {
		if s == mf.mode {
			return s, nil
		}
	}
	return "", fieldError("mode", "must be one of interval, cron, once", nil)
}

func readInterval(v any) (time.Duration, error) {
	if value.Blank(v) {
		return DefaultIntervalSecs * time.Second, nil
	}
	n, ok := value.NumberOrText(v)
	switch {
	case !ok:
		return 0, fieldError("interval_secs", "is not a number", nil)
	case n != math.Trunc(n):
		return 0, fieldError("interval_secs", "is not a whole number", nil)
	case n < MinIntervalSecs:
		return MinInterval, nil
	case n >= float64(maxIntervalSecs):
		return time.Duration(maxIntervalSecs) * time.Second, nil
	}
	return time.Duration(n) * time.Second, nil
}

func readCron(v any) (*Cron, error) {
	text, err := readText("cron_expr", "cron", v)
	if err != nil {
		return nil, err
	}
	c, err := ParseCron(text)
	if err != nil {
		return nil, fieldError("cron_expr", err.Error(), err)
	}
	if c.never {
		return nil, fieldError("cron_expr", "never fires: no month it selects has a day it selects", nil)
	}
	return c, nil
}

// runAtLayouts are the accepted run_at forms after upper-casing and
// replacing a space separator by T. time.Parse also accepts fractional
// seconds after the seconds field.
var runAtLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04Z07",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
}

func readRunAt(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), nil
	}
	text, err := readText("run_at", "once", v)
	if err != nil {
		return time.Time{}, err
	}
	s := strings.ToUpper(text)
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, layout := range runAtLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fieldError("run_at", "is not an ISO 8601 date and time such as 2025-06-01T09:30:00Z", nil)
}

func readText(field, mode string, v any) (string, error) {
	if value.Blank(v) {
		return "", fieldError(field, "is required in "+mode+" mode", nil)
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldError(field, "must be text", nil)
	}
	if strings.Contains(s, "{{") {
		return "", fieldError(field, "expressions are not evaluated in a schedule; write the value itself", nil)
	}
	return strings.TrimSpace(s), nil
}

// Next returns when the schedule fires next, given the time of its
// previous fire (zero if it has not fired) and the current time, or false
// if it never fires again. The result is strictly after now and in now's
// location.
//
//   - interval: the first of prev+Interval, prev+2·Interval, … after now,
//     so the cadence stays on the first fire's phase and slots missed while
//     the server was down or a run overran are skipped, not queued. Pass
//     the scheduled fire time as prev, not the end of the run, or the
//     cadence drifts. With no prev it is now+Interval.
//   - cron: the expression's next time after now (after prev if the clock
//     went back), read in now's location: see Cron.Next.
//   - once: RunAt if it has not fired and RunAt is after now; a run_at in
//     the past never fires.
func (s *Spec) Next(prev, now time.Time) (time.Time, bool) {
	loc := now.Location()
	switch s.Kind {
	case KindInterval:
		if s.Interval <= 0 {
			return time.Time{}, false
		}
		if prev.IsZero() {
			return now.Add(s.Interval), true
		}
		next := prev.Add(s.Interval)
		for !next.After(now) {
			// Sub saturates, so a huge gap takes a few big steps.
			step := now.Sub(next) / s.Interval * s.Interval
			if step == 0 {
				step = s.Interval
			}
			next = next.Add(step)
		}
		return next.In(loc), true
	case KindCron:
		if s.Cron == nil {
			return time.Time{}, false
		}
		after := now
		if prev.After(now) {
			after = prev.In(loc)
		}
		return s.Cron.Next(after)
	case KindOnce:
		if !prev.IsZero() || !s.RunAt.After(now) {
			return time.Time{}, false
		}
		return s.RunAt.In(loc), true
	}
	return time.Time{}, false
}
