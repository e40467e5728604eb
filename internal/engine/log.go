package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// LogEntry is one line of a run log.
type LogEntry struct {
	At      time.Time      `json:"at"`
	Level   string         `json:"level"` // info, warn or error
	NodeID  string         `json:"node_id,omitempty"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// maxLogEntries bounds a run log; later entries are counted, not kept.
const maxLogEntries = 10_000

// runLog collects a run's log. Nodes write to it through slog.
type runLog struct {
	mu      sync.Mutex
	entries []LogEntry
	dropped int
	meter   *meter
}

func (l *runLog) add(e LogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= maxLogEntries {
		l.dropped++
		return
	}
	l.entries = append(l.entries, e)
	l.meter.addOverhead(int64(96 + len(e.Message) + len(e.NodeID)))
}

// snapshot returns the entries, with a last line counting dropped ones.
func (l *runLog) snapshot() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LogEntry, len(l.entries), len(l.entries)+1)
	copy(out, l.entries)
	if l.dropped > 0 {
		out = append(out, LogEntry{At: time.Now(), Level: "warn",
			Message: fmt.Sprintf("%d more log entries were dropped (a run keeps %d)", l.dropped, maxLogEntries)})
	}
	return out
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warn"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}

// logHandler is the slog handler a node's logger writes through. Records
// below Info are dropped.
type logHandler struct {
	log    *runLog
	nodeID string
	attrs  []slog.Attr
	group  string
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *logHandler) Handle(_ context.Context, rec slog.Record) error {
	e := LogEntry{At: rec.Time, Level: levelName(rec.Level), NodeID: h.nodeID, Message: rec.Message}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if n := len(h.attrs) + rec.NumAttrs(); n > 0 {
		e.Fields = make(map[string]any, n)
		for _, a := range h.attrs {
			addAttr(e.Fields, "", a)
		}
		rec.Attrs(func(a slog.Attr) bool {
			addAttr(e.Fields, h.group, a)
			return true
		})
	}
	h.log.add(e)
	return nil
}

func addAttr(m map[string]any, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			addAttr(m, key, g)
		}
		return
	}
	switch a.Value.Kind() {
	case slog.KindString:
		m[key] = a.Value.String()
	case slog.KindInt64:
		m[key] = int(a.Value.Int64())
	case slog.KindFloat64:
		m[key] = a.Value.Float64()
	case slog.KindBool:
		m[key] = a.Value.Bool()
	default:
		m[key] = a.Value.String()
	}
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = strings.TrimPrefix(h.group+"."+name, ".")
	return &c
}
