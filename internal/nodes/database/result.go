package database

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/node"
)

// maxSafeInt is 2^53: integers beyond it lose precision in a float64, and
// so in JavaScript clients of the result.
const maxSafeInt = 1 << 53

// resultSet collects SQL rows under the limits. A query over a limit fails;
// an execute keeps the rows that fit and drops the rest.
type resultSet struct {
	limits  Limits
	execute bool
	log     *slog.Logger

	columns []string
	rows    []any
	bytes   int64
	seen    int
	// truncated is set once an execute dropped a row.
	truncated bool
	// precise lists the columns already logged under PRECISION.
	precise map[int]bool
}

func newResultSet(limits Limits, execute bool, log *slog.Logger) *resultSet {
	return &resultSet{limits: limits, execute: execute, log: log, rows: []any{}, precise: map[int]bool{}}
}

// setColumns records the column names and logs each name that appears more
// than once: such columns share one key in a row object, and the last one
// wins.
func (r *resultSet) setColumns(cols []string) {
	r.columns = cols
	count := map[string]int{}
	for _, c := range cols {
		count[c]++
	}
	for _, c := range cols {
		if n := count[c]; n > 1 {
			r.log.Warn(fmt.Sprintf("%s: column %q appears %d times; each row keeps the last one (give the columns distinct names with AS)", LogDuplicateColumn, c, n),
				"code", LogDuplicateColumn, "column", c)
			count[c] = 0
		}
	}
}

// admit reports whether a row of size bytes (its column names plus its
// values as sent) fits. Past a limit a query fails with ROW_LIMIT_EXCEEDED;
// an execute stops keeping rows.
func (r *resultSet) admit(size int64) (bool, error) {
	r.seen++
	if r.truncated {
		return false, nil
	}
	if len(r.rows)+1 <= r.limits.MaxRows && r.bytes+size <= r.limits.MaxBytes {
		r.bytes += size
		return true, nil
	}
	if !r.execute {
		what := fmt.Sprintf("more than %d rows", r.limits.MaxRows)
		if len(r.rows)+1 <= r.limits.MaxRows {
			what = fmt.Sprintf("more than %d bytes", r.limits.MaxBytes)
		}
		return false, node.FieldError(CodeRowLimitExceeded, "query", "returns %s; add a LIMIT or select fewer columns", what)
	}
	r.truncated = true
	return false, nil
}

// add appends a decoded row.
func (r *resultSet) add(vals []any) {
	row := make(map[string]any, len(vals))
	for i, v := range vals {
		row[r.columns[i]] = v
	}
	r.rows = append(r.rows, row)
}

// finish logs a truncation and returns the node's output.
func (r *resultSet) finish(affected, lastID int64) map[string]any {
	if r.truncated {
		r.log.Warn(fmt.Sprintf("%s: the statement returned %d rows; kept the first %d (limits: %d rows, %d bytes)",
			LogResultTruncated, r.seen, len(r.rows), r.limits.MaxRows, r.limits.MaxBytes),
			"code", LogResultTruncated, "rows", r.seen, "kept", len(r.rows))
	}
	cols := make([]any, len(r.columns))
	for i, c := range r.columns {
		cols[i] = c
	}
	return map[string]any{
		"rows":           r.rows,
		"columns":        cols,
		"rows_affected":  int(affected),
		"last_insert_id": int(lastID),
		"truncated":      r.truncated,
	}
}

// integer returns an integer value, logging once per column when it is
// beyond 2^53. The value stays exact in the run (an int), but JavaScript
// clients of the result will round it.
func (r *resultSet) integer(col int, n int64) any {
	if n > maxSafeInt || n < -maxSafeInt {
		r.logPrecision(col, strconv.FormatInt(n, 10))
	}
	return int(n)
}

// unsigned returns an unsigned integer: an int when it fits, else its exact
// text.
func (r *resultSet) unsigned(col int, n uint64) any {
	if n <= math.MaxInt64 {
		return r.integer(col, int64(n))
	}
	r.logPrecision(col, strconv.FormatUint(n, 10))
	return strconv.FormatUint(n, 10)
}

func (r *resultSet) logPrecision(col int, example string) {
	if r.precise[col] {
		return
	}
	r.precise[col] = true
	r.log.Warn(fmt.Sprintf("%s: column %q holds integers beyond 2^53 (%s); JavaScript clients lose precision (cast to text in SQL to keep them exact everywhere)",
		LogPrecision, r.columns[col], example), "code", LogPrecision, "column", r.columns[col])
}

// unsupported is the placeholder for a value of a type the node does not
// decode.
func unsupported(typeName string) string {
	return fmt.Sprintf("(unsupported type: %s)", typeName)
}

// floatValue returns a float, or its name for NaN and the infinities.
func floatValue(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// parseFloatText reads a float as a server writes it, keeping NaN and the
// infinities as text.
func parseFloatText(s string) any {
	switch strings.ToLower(s) {
	case "nan":
		return "NaN"
	case "infinity", "inf", "+infinity":
		return "Infinity"
	case "-infinity", "-inf":
		return "-Infinity"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return floatValue(f)
}

// isoDateTime turns "2006-01-02 15:04:05[.999][+07[:00]]" into ISO 8601:
// a T between date and time, and a full +hh:mm offset. Text of another
// shape (infinity, BC dates) is kept.
func isoDateTime(s string) string {
	if len(s) < 19 || s[10] != ' ' || s[4] != '-' || s[13] != ':' {
		return s
	}
	s = s[:10] + "T" + s[11:]
	return isoOffset(s, 19)
}

// isoOffset completes an hour-only UTC offset ("+02") after position from.
func isoOffset(s string, from int) string {
	if i := strings.LastIndexAny(s, "+-"); i >= from && len(s)-i == 3 {
		return s + ":00"
	}
	return s
}

// isoTime formats a time read as time.Time: a date alone when it has no
// clock part and the column is a date.
func isoTime(t time.Time, dateOnly bool) string {
	if dateOnly && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}

// binaryValue is how bytes travel: standard base64.
func binaryValue(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// cellSize is the size a driver value counts for against the byte limit.
func cellSize(v any) int64 {
	switch t := v.(type) {
	case nil:
		return 0
	case []byte:
		return int64(len(t))
	case string:
		return int64(len(t))
	case time.Time:
		return 32
	}
	return 8
}
