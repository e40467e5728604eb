// Package workflow is the workflow document (DESIGN section 2): its types,
// parsing with field-naming errors, a round trip that keeps fields it does
// not know, and the validation report of spec/server.md "Checks".
package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/svcrun/svc/internal/value"
)

// Workflow is a workflow document.
type Workflow struct {
	ID           string
	Name         string
	Tags         []string
	CollectionID *string
	Variables    map[string]any
	Nodes        []Node
	Edges        []Edge
	// Extra holds top-level members this version does not know, kept
	// verbatim on a round trip.
	Extra map[string]json.RawMessage
}

// Node is one node of a workflow.
type Node struct {
	ID         string
	NodeTypeID string
	Name       string
	Config     map[string]any
	Disabled   bool
	Retry      *Retry
	// Position is where an editor draws the node; the engine ignores it.
	Position json.RawMessage
	Extra    map[string]json.RawMessage
}

// Retry is a node's retry setting (rule 4 of spec/nodes.md).
type Retry struct {
	Enabled     bool
	MaxAttempts int // 1 to 10
	BackoffMs   int
}

// Edge is a wire from an output port of one node to an input port of another.
type Edge struct {
	ID string
	// From and To are node ids.
	From, To string
	// FromPort empty means the source node's default output port.
	FromPort string
	// ToPort empty means "in".
	ToPort string
	Extra  map[string]json.RawMessage
}

// Limits of the document.
const (
	MaxIDLength     = 256
	MaxRetries      = 10
	DefaultPortIn   = "in"
	defaultAttempts = 3
)

// ParseError is a document that does not parse as a workflow. Path names the
// member at fault ("nodes[2].config"); the message never quotes values.
type ParseError struct {
	Path    string
	Message string
}

// Error returns the path and the message.
func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

func perr(path, format string, args ...any) error {
	return &ParseError{Path: path, Message: fmt.Sprintf(format, args...)}
}

// Parse reads a workflow document.
func Parse(data []byte) (*Workflow, error) {
	top, err := object(data, "")
	if err != nil {
		return nil, err
	}
	w := &Workflow{}
	if w.ID, err = str(top, "id", "", true); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(w.ID); n < 1 || n > MaxIDLength {
		return nil, perr("id", "must be 1 to %d characters", MaxIDLength)
	}
	if w.Name, err = str(top, "name", "", true); err != nil {
		return nil, err
	}
	if strings.TrimSpace(w.Name) == "" {
		return nil, perr("name", "is required")
	}
	if raw, ok := present(top, "tags"); ok {
		if err := decodeInto(raw, &w.Tags); err != nil {
			return nil, perr("tags", "must be an array of strings")
		}
	}
	if raw, ok := present(top, "collection_id"); ok {
		var s string
		if err := decodeInto(raw, &s); err != nil {
			return nil, perr("collection_id", "must be a string or null")
		}
		w.CollectionID = &s
	}
	if raw, ok := present(top, "variables"); ok {
		v, err := value.Decode(raw)
		m, isObj := v.(map[string]any)
		if err != nil || !isObj {
			return nil, perr("variables", "must be an object")
		}
		w.Variables = m
	}
	if raw, ok := present(top, "nodes"); ok {
		var items []json.RawMessage
		if err := decodeInto(raw, &items); err != nil {
			return nil, perr("nodes", "must be an array")
		}
		w.Nodes = make([]Node, len(items))
		for i, item := range items {
			if err := parseNode(item, fmt.Sprintf("nodes[%d]", i), &w.Nodes[i]); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := present(top, "edges"); ok {
		var items []json.RawMessage
		if err := decodeInto(raw, &items); err != nil {
			return nil, perr("edges", "must be an array")
		}
		w.Edges = make([]Edge, len(items))
		for i, item := range items {
			if err := parseEdge(item, fmt.Sprintf("edges[%d]", i), &w.Edges[i]); err != nil {
				return nil, err
			}
		}
	}
	w.Extra = rest(top, "id", "name", "tags", "collection_id", "variables", "nodes", "edges")
	return w, nil
}

func parseNode(data []byte, path string, n *Node) error {
	m, err := object(data, path)
	if err != nil {
		return err
	}
	if n.ID, err = str(m, "id", path, true); err != nil {
		return err
	}
	if n.ID == "" {
		return perr(path+".id", "is required")
	}
	if n.NodeTypeID, err = str(m, "node_type_id", path, true); err != nil {
		return err
	}
	if n.NodeTypeID == "" {
		return perr(path+".node_type_id", "is required")
	}
	if n.Name, err = str(m, "name", path, false); err != nil {
		return err
	}
	n.Config = map[string]any{}
	if raw, ok := present(m, "config"); ok {
		v, err := value.Decode(raw)
		cfg, isObj := v.(map[string]any)
		if err != nil || !isObj {
			return perr(path+".config", "must be an object")
		}
		n.Config = cfg
	}
	if raw, ok := present(m, "disabled"); ok {
		if err := decodeInto(raw, &n.Disabled); err != nil {
			return perr(path+".disabled", "must be true or false")
		}
	}
	if raw, ok := present(m, "retry"); ok {
		r, err := parseRetry(raw, path+".retry")
		if err != nil {
			return err
		}
		n.Retry = r
	}
	if raw, ok := present(m, "position"); ok {
		n.Position = raw
	}
	n.Extra = rest(m, "id", "node_type_id", "name", "config", "disabled", "retry", "position")
	return nil
}

func parseRetry(data []byte, path string) (*Retry, error) {
	m, err := object(data, path)
	if err != nil {
		return nil, err
	}
	r := &Retry{MaxAttempts: defaultAttempts, BackoffMs: 1000}
	if raw, ok := present(m, "enabled"); ok {
		if err := decodeInto(raw, &r.Enabled); err != nil {
			return nil, perr(path+".enabled", "must be true or false")
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
		min  int
		max  int
	}{
		{"max_attempts", &r.MaxAttempts, 1, MaxRetries},
		{"backoff_ms", &r.BackoffMs, 0, 3_600_000},
	} {
		raw, ok := present(m, f.name)
		if !ok {
			continue
		}
		v, err := value.Decode(raw)
		n, isNum := value.NumberOrText(v)
		if err != nil || !isNum || n != float64(int(n)) {
			return nil, perr(path+"."+f.name, "must be a whole number")
		}
		*f.dst = min(max(int(n), f.min), f.max)
	}
	return r, nil
}

func parseEdge(data []byte, path string, e *Edge) error {
	m, err := object(data, path)
	if err != nil {
		return err
	}
	fields := []struct {
		name     string
		dst      *string
		required bool
	}{
		{"id", &e.ID, true},
		{"from", &e.From, true},
		{"to", &e.To, true},
		{"from_port", &e.FromPort, false},
		{"to_port", &e.ToPort, false},
	}
	for _, f := range fields {
		if *f.dst, err = str(m, f.name, path, f.required); err != nil {
			return err
		}
		if f.required && *f.dst == "" {
			return perr(path+"."+f.name, "is required")
		}
	}
	e.Extra = rest(m, "id", "from", "to", "from_port", "to_port")
	return nil
}

// object decodes a JSON object into its raw members.
func object(data []byte, path string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, perr(path, "is not valid JSON (syntax error at byte %d)", syn.Offset)
		}
		if path == "" {
			return nil, perr(path, "the workflow must be a JSON object")
		}
		return nil, perr(path, "must be an object")
	}
	return m, nil
}

// present returns a member that exists and is not null.
func present(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	raw, ok := m[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, false
	}
	return raw, true
}

func str(m map[string]json.RawMessage, key, path string, required bool) (string, error) {
	full := key
	if path != "" {
		full = path + "." + key
	}
	raw, ok := present(m, key)
	if !ok {
		if required {
			return "", perr(full, "is required")
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", perr(full, "must be a string")
	}
	return s, nil
}

func decodeInto(raw json.RawMessage, dst any) error { return json.Unmarshal(raw, dst) }

func rest(m map[string]json.RawMessage, known ...string) map[string]json.RawMessage {
	var extra map[string]json.RawMessage
	for k, v := range m {
		if slices.Contains(known, k) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = v
	}
	return extra
}

// MarshalJSON writes the document with its known members first, in the
// order of DESIGN section 2, then the unknown ones sorted by name.
func (w *Workflow) MarshalJSON() ([]byte, error) {
	var b obj
	b.put("id", w.ID)
	b.put("name", w.Name)
	if w.Tags != nil {
		b.put("tags", w.Tags)
	}
	b.put("collection_id", w.CollectionID)
	if w.Variables != nil {
		b.put("variables", w.Variables)
	}
	nodes := w.Nodes
	if nodes == nil {
		nodes = []Node{}
	}
	b.put("nodes", nodes)
	edges := w.Edges
	if edges == nil {
		edges = []Edge{}
	}
	b.put("edges", edges)
	b.extra(w.Extra)
	return b.close()
}

// MarshalJSON writes a node, keeping its unknown members.
func (n Node) MarshalJSON() ([]byte, error) {
	var b obj
	b.put("id", n.ID)
	b.put("node_type_id", n.NodeTypeID)
	if n.Name != "" {
		b.put("name", n.Name)
	}
	cfg := n.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	b.put("config", cfg)
	if n.Disabled {
		b.put("disabled", true)
	}
	if n.Retry != nil {
		b.put("retry", map[string]any{
			"enabled": n.Retry.Enabled, "max_attempts": n.Retry.MaxAttempts, "backoff_ms": n.Retry.BackoffMs,
		})
	}
	if len(n.Position) > 0 {
		b.put("position", n.Position)
	}
	b.extra(n.Extra)
	return b.close()
}

// MarshalJSON writes an edge, keeping its unknown members.
func (e Edge) MarshalJSON() ([]byte, error) {
	var b obj
	b.put("id", e.ID)
	b.put("from", e.From)
	if e.FromPort != "" {
		b.put("from_port", e.FromPort)
	}
	b.put("to", e.To)
	if e.ToPort != "" {
		b.put("to_port", e.ToPort)
	}
	b.extra(e.Extra)
	return b.close()
}

// obj writes a JSON object member by member, in call order.
type obj struct {
	buf bytes.Buffer
	err error
}

func (o *obj) put(key string, v any) {
	if o.err != nil {
		return
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	data, err := json.Marshal(v)
	if err != nil {
		o.err = err
		return
	}
	o.buf.Write(data)
}

func (o *obj) extra(m map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o.put(k, m[k])
	}
}

func (o *obj) close() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}

// NodeIndex returns the index of the first node with an id, or -1.
func (w *Workflow) NodeIndex(id string) int {
	for i := range w.Nodes {
		if w.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}
