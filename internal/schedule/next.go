package schedule

import (
	"math/bits"
	"time"
)

// searchYears bounds the calendar search. The Gregorian calendar repeats
// every 400 years (146,097 days, a whole number of weeks), so a date the
// fields allow turns up within 401 years or never.
const searchYears = 401

// maxSegments bounds how many daylight-saving changes Next steps across
// before giving up: enough for a few centuries of twice-yearly changes.
const maxSegments = 1000

// lastYear is the last year Next returns: times after 9999 have no RFC 3339
// form, so they could not be stored or sent as next_run_at.
const lastYear = 9999

// Next returns the first time strictly after `after` at which the expression
// fires, in after's location, and false if there is none up to year 9999
// (0 0 30 2 * never fires). A zero Cron never fires.
//
// The fields are read as wall-clock time in after's location: pass times in
// the server's local zone for the usual cron behaviour, or in UTC. Seconds
// are always zero.
//
// A daylight-saving change is handled as Vixie cron and cronie do. When the
// minute and hour fields are both fixed (neither starts with '*'), a time
// the change skips fires once at the moment of the change (a 02:30 job runs
// at 03:00 on the spring-forward day), and a time the change repeats fires
// only the first time. When the minute or hour field starts with '*', the
// expression fires at every real minute whose local time matches: none
// during a skipped stretch, both times during a repeated one.
func (c *Cron) Next(after time.Time) (time.Time, bool) {
	if c.never || c.expr == "" || after.Year() > lastYear { // expr is empty only in a zero Cron
		return time.Time{}, false
	}
	loc := after.Location()
	fixed := !c.minuteStar && !c.hourStar
	t := after
	_, off := t.Zone()
	// The first whole local minute strictly after `after`.
	from := floorDiv(t.Unix()+int64(off), 60)*60 + 60
	if start, _ := t.ZoneBounds(); fixed && !start.IsZero() {
		// After a change that set the clock back, times before the old
		// offset's reading of the change were fired on the first pass.
		if _, prev := start.Add(-time.Second).Zone(); prev > off {
			from = max(from, ceilMinute(start.Unix()+int64(prev)))
		}
	}
	// cand is the first match at or after candFrom on the local time line.
	var cand, candFrom int64
	have := false
	for range maxSegments {
		_, end := t.ZoneBounds()
		_, off := t.Zone()
		if !have || from < candFrom || from > cand {
			var ok bool
			if cand, ok = c.nextLocal(from); !ok {
				return time.Time{}, false
			}
			candFrom, have = from, true
		}
		at := cand - int64(off)
		if end.IsZero() || at < end.Unix() {
			return c.result(time.Unix(at, 0).In(loc))
		}
		// cand lies past the next change of offset.
		_, next := end.Zone()
		if fixed && next > off && cand < end.Unix()+int64(next) {
			// The change skips cand's local time: fire at the change.
			return c.result(end.In(loc))
		}
		from = ceilMinute(end.Unix() + int64(next))
		if fixed && next < off {
			// The change repeats local times: skip those already passed.
			from = ceilMinute(end.Unix() + int64(off))
		}
		t = end
	}
	return time.Time{}, false
}

func (c *Cron) result(t time.Time) (time.Time, bool) {
	if t.Year() > lastYear {
		return time.Time{}, false
	}
	return t, true
}

// nextLocal returns the first minute at or after from that the fields
// match. Times here are seconds on the local time line (a wall-clock
// reading counted as if it were UTC); from is a whole minute.
func (c *Cron) nextLocal(from int64) (int64, bool) {
	days := floorDiv(from, 86400)
	y, mo, d := civil(days)
	sec := int(from - days*86400)
	h, mi := sec/3600, sec%3600/60
	stop := y + searchYears
	for y <= stop {
		if c.month&(1<<mo) == 0 {
			if mo = nextBit(c.month, mo+1); mo < 0 {
				y, mo = y+1, nextBit(c.month, 1)
			}
			d, h, mi = 1, 0, 0
			continue
		}
		if !c.dayMatches(y, mo, d) {
			y, mo, d = nextDay(y, mo, d)
			h, mi = 0, 0
			continue
		}
		if c.hour&(1<<h) == 0 {
			if h = nextBit(c.hour, h+1); h < 0 {
				y, mo, d = nextDay(y, mo, d)
				h = 0
			}
			mi = 0
			continue
		}
		if c.minute&(1<<mi) == 0 {
			if mi = nextBit(c.minute, mi+1); mi < 0 {
				h, mi = h+1, 0
				if h == 24 {
					y, mo, d = nextDay(y, mo, d)
					h = 0
				}
			}
			continue
		}
		return daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60), true
	}
	return 0, false
}

// dayMatches applies the day-or-weekday rule: when both the day and weekday
// fields are restricted (neither starts with '*') either may match;
// otherwise both must.
func (c *Cron) dayMatches(y int64, mo, d int) bool {
	wd := int(floorMod(daysFromCivil(y, mo, d)+4, 7)) // 1970-01-01 was a Thursday
	dayOK := c.day&(1<<d) != 0
	weekdayOK := c.weekday&(1<<wd) != 0
	if c.dayStar || c.weekdayStar {
		return dayOK && weekdayOK
	}
	return dayOK || weekdayOK
}

// nextBit returns the lowest set bit of mask at or above from, or -1.
func nextBit(mask uint64, from int) int {
	if from > 63 || mask>>from == 0 {
		return -1
	}
	return from + bits.TrailingZeros64(mask>>from)
}

func nextDay(y int64, mo, d int) (int64, int, int) {
	if d++; d > daysIn(y, mo) {
		d, mo = 1, mo+1
		if mo > 12 {
			mo, y = 1, y+1
		}
	}
	return y, mo, d
}

func daysIn(y int64, mo int) int {
	if mo == 2 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return 28
	}
	return maxDays[mo]
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's days_from_civil).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civil is the inverse of daysFromCivil.
func civil(days int64) (y int64, m, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func ceilMinute(sec int64) int64 { return -floorDiv(-sec, 60) * 60 }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
