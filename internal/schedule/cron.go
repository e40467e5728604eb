package schedule

import (
	"strconv"
	"strings"
)

// Which library does what. github.com/adhocore/gronx (v1.20.4) was the
// candidate for matching and next-fire computation, and its matcher agrees
// with the Schedule rules of spec/nodes.md once a strict validator stands in
// front of it. Its next-tick search does not: it gives up ("tried so hard")
// on ordinary expressions in zones whose daylight-saving change happens at
// midnight (0 12 21 * * in America/Santiago), cannot tell an expression that
// never fires (0 0 30 2 *) from a slow search, has a fixed iteration budget,
// and takes 5 to 250 µs a call. So this package does all of the work itself:
// the strict parse below (five fields, names only where they belong, no
// L/W/#/?, ranges and steps checked, the macros of Vixie cron including
// @midnight), field sets as bit masks, and a calendar search in next.go.
// gronx stays as the independent reference the tests compare Next against.

// Cron is a parsed five-field cron expression: minute hour day month weekday.
// The zero value is not usable; get one from ParseCron.
type Cron struct {
	expr string
	// Bit i of a mask is set when value i is selected. Weekday 7 is stored
	// as 0 (both mean Sunday).
	minute, hour, day, month, weekday uint64
	// Whether the field's text starts with '*'. dayStar and weekdayStar
	// drive the day-or-weekday rule; minuteStar and hourStar decide how
	// daylight-saving changes are handled (next.go).
	minuteStar, hourStar, dayStar, weekdayStar bool
	// never is set when no date can ever satisfy the day, weekday and month
	// fields together (0 0 30 2 *).
	never bool
}

// CronError is a cron expression ParseCron rejects. Part names the field at
// fault ("minute", "hour", "day", "month" or "weekday"); it is empty when
// the expression as a whole is wrong (empty, wrong number of fields, unknown
// macro).
type CronError struct {
	Part   string
	Reason string
}

// Error returns "<part> field: <reason>", or the reason alone.
func (e *CronError) Error() string {
	if e.Part == "" {
		return e.Reason
	}
	return e.Part + " field: " + e.Reason
}

// macros are the shorthands of Vixie cron, as their five-field equivalents.
// @reboot is refused: a schedule needs a time.
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

type part struct {
	name   string
	lo, hi int
	// stepHi is the last value a '*' or 'N/step' item reaches. It is hi
	// except for weekday, where 7 is only another way to write Sunday, so
	// "*/2" and "1/2" stop at Saturday.
	stepHi int
	names  map[string]int
}

var (
	monthNames = map[string]int{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	weekdayNames = map[string]int{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}
	parts = [5]part{
		{name: "minute", lo: 0, hi: 59, stepHi: 59},
		{name: "hour", lo: 0, hi: 23, stepHi: 23},
		{name: "day", lo: 1, hi: 31, stepHi: 31},
		{name: "month", lo: 1, hi: 12, stepHi: 12, names: monthNames},
		{name: "weekday", lo: 0, hi: 7, stepHi: 6, names: weekdayNames},
	}
)

// ParseCron reads a cron expression strictly, by the Schedule rules of
// spec/nodes.md: exactly five fields (minute 0-59, hour 0-23, day 1-31,
// month 1-12, weekday 0-7 with 0 and 7 both Sunday) separated by spaces or
// tabs; each field a comma list of '*', a number, a range a-b (a <= b) or
// any of those followed by /step; N/step means N to the end of the field.
// Month names (JAN-DEC) and weekday names (SUN-SAT) are three letters in any
// case and only allowed in their own field. The macros @yearly, @annually,
// @monthly, @weekly, @daily, @midnight and @hourly (any case) stand for
// their usual five fields. Seconds and year fields, Quartz's L, W, # and ?,
// and wrap-around ranges (FRI-MON) are rejected with a *CronError naming the
// field.
//
// An expression that is well formed but can never fire, such as 0 0 30 2 *,
// is accepted; its Next reports false.
func ParseCron(expr string) (*Cron, error) {
	text := strings.TrimSpace(expr)
	if text == "" {
		return nil, &CronError{Reason: "is empty; want five fields: minute hour day month weekday"}
	}
	if text[0] == '@' {
		name := strings.ToLower(text)
		switch {
		case name == "@reboot":
			return nil, &CronError{Reason: "@reboot is not supported: a schedule needs a time"}
		case strings.HasPrefix(name, "@every"):
			return nil, &CronError{Reason: "@every is not supported: use mode interval with interval_secs"}
		}
		five, ok := macros[name]
		if !ok {
			return nil, &CronError{Reason: "unknown macro " + strconv.Quote(text) + "; known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"}
		}
		c, err := parseFields(strings.Fields(five))
		if err != nil {
			panic("schedule: bad macro " + name + ": " + err.Error())
		}
		c.expr = text
		return c, nil
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(fields) != 5 {
		reason := "has " + strconv.Itoa(len(fields)) + " fields; want five: minute hour day month weekday"
		if len(fields) > 5 {
			reason += " (seconds and year fields are not supported)"
		}
		return nil, &CronError{Reason: reason}
	}
	c, err := parseFields(fields)
	if err != nil {
		return nil, err
	}
	c.expr = text
	return c, nil
}

func parseFields(fields []string) (*Cron, error) {
	var masks [5]uint64
	var stars [5]bool
	for i, f := range fields {
		m, err := parts[i].parse(f)
		if err != nil {
			return nil, &CronError{Part: parts[i].name, Reason: err.Error()}
		}
		masks[i], stars[i] = m, f[0] == '*'
	}
	if masks[4]&(1<<7) != 0 {
		masks[4] = masks[4]&^(1<<7) | 1
	}
	c := &Cron{
		minute: masks[0], hour: masks[1], day: masks[2], month: masks[3], weekday: masks[4],
		minuteStar: stars[0], hourStar: stars[1], dayStar: stars[2], weekdayStar: stars[4],
	}
	c.never = (c.dayStar || c.weekdayStar) && !c.someMonthHasDay()
	return c, nil
}

// someMonthHasDay reports whether a selected month has a selected day
// (February counted with 29 days). When day and weekday must both match,
// that is enough for the expression to fire: within the 400-year Gregorian
// cycle every month-day falls on every weekday.
func (c *Cron) someMonthHasDay() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) != 0 && c.day&(1<<(maxDays[m]+1)-1) != 0 {
			return true
		}
	}
	return false
}

var maxDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// String returns the expression as it was given, without surrounding space.
func (c *Cron) String() string { return c.expr }

type reason string

func (r reason) Error() string { return string(r) }

func (p *part) parse(field string) (uint64, error) {
	var mask uint64
	for item := range strings.SplitSeq(field, ",") {
		if item == "" {
			return 0, reason("empty item in list " + strconv.Quote(field))
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			var err error
			if step, err = p.step(stepText); err != nil {
				return 0, err
			}
		}
		var lo, hi int
		switch a, b, isRange := strings.Cut(rng, "-"); {
		case rng == "*":
			lo, hi = p.lo, p.stepHi
		case rng == "":
			return 0, reason("missing value before /" + stepText)
		case isRange:
			var err error
			if lo, err = p.value(a); err != nil {
				return 0, err
			}
			if hi, err = p.value(b); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, reason("range " + strconv.Quote(rng) + " runs backwards; wrap-around ranges are not supported, use a list")
			}
		default:
			var err error
			if lo, err = p.value(rng); err != nil {
				return 0, err
			}
			hi = lo
			if hasStep {
				if lo > p.stepHi {
					return 0, reason(strconv.Quote(item) + ": write Sunday as 0 to start a step (0/" + stepText + ")")
				}
				hi = p.stepHi
			}
		}
		for v := lo; v <= hi; v += step {
			mask |= 1 << v
		}
	}
	return mask, nil
}

func (p *part) step(text string) (int, error) {
	if text == "" {
		return 0, reason("missing step after /")
	}
	if !digits(text) {
		return 0, reason("step " + strconv.Quote(text) + " is not a whole number")
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > p.hi {
		return 0, reason("step " + text + " is out of range 1-" + strconv.Itoa(p.hi))
	}
	return n, nil
}

func (p *part) value(text string) (int, error) {
	span := strconv.Itoa(p.lo) + "-" + strconv.Itoa(p.hi)
	switch {
	case text == "":
		return 0, reason("missing value in range")
	case digits(text):
		n, err := strconv.Atoi(text)
		if err != nil || n < p.lo || n > p.hi {
			return 0, reason(text + " is out of range " + span)
		}
		return n, nil
	case text == "?":
		return 0, reason("? is not supported; use *")
	case strings.Contains(text, "#"):
		return 0, reason(strconv.Quote(text) + ": # (nth weekday of the month) is not supported")
	case text == "*":
		return 0, reason("* cannot be part of a range")
	case lastOrWeekday(text):
		return 0, reason(strconv.Quote(text) + ": L and W (last day, nearest weekday) are not supported")
	case letters(text):
		lower := strings.ToLower(text)
		if n, ok := p.names[lower]; ok {
			return n, nil
		}
		_, isWeekday := weekdayNames[lower]
		_, isMonth := monthNames[lower]
		switch {
		case p.names == nil:
			return 0, reason(strconv.Quote(text) + ": names are allowed only in the month and weekday fields")
		case p.name == "month" && isWeekday:
			return 0, reason(strconv.Quote(text) + " is a weekday name, not a month")
		case p.name == "weekday" && isMonth:
			return 0, reason(strconv.Quote(text) + " is a month name, not a weekday")
		case p.name == "month":
			return 0, reason("unknown month name " + strconv.Quote(text) + "; use JAN-DEC or 1-12")
		default:
			return 0, reason("unknown weekday name " + strconv.Quote(text) + "; use SUN-SAT or 0-7")
		}
	case text[0] == '-' || text[0] == '+':
		return 0, reason(strconv.Quote(text) + " is not a value in range " + span)
	}
	return 0, reason(strconv.Quote(text) + " is not a number or name")
}

// lastOrWeekday reports Quartz's L and W forms: L, LW, 5L, 15W.
func lastOrWeekday(s string) bool {
	u := strings.ToUpper(s)
	if u == "L" || u == "LW" {
		return true
	}
	body := u[:len(u)-1]
	return (u[len(u)-1] == 'L' || u[len(u)-1] == 'W') && body != "" && digits(body)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}
