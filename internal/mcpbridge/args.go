package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// kind is the JSON type of a tool argument.
type kind int

const (
	kindString kind = iota
	kindInt
	kindBool
	kindObject
	// kindWorkflow is a workflow document: a JSON object, or a string
	// holding one (DESIGN section 8).
	kindWorkflow
)

// param is one argument of a tool. Its input schema and its decoding come
// from the same value.
type param struct {
	name     string
	kind     kind
	required bool
	desc     string
	// min and max bound an integer; max 0 means no upper bound. A value
	// above max is clamped when clamp is set and refused otherwise.
	min, max int64
	clamp    bool
	// def is the default shown in the schema (nil: none).
	def any
}

// argError is an argument the tool cannot decode. Its message has the form
// of a serde error, as the spec's errors table gives it.
type argError struct{ msg string }

func (e *argError) Error() string { return "failed to deserialize parameters: " + e.msg }

func argErrorf(format string, args ...any) error {
	return &argError{msg: fmt.Sprintf(format, args...)}
}

// args are decoded tool arguments: string, int64, bool, map[string]any or
// (for a workflow) []byte, by name. An absent optional argument is not in
// the map.
type args map[string]any

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) num(name string, def int64) int64 {
	if v, ok := a[name].(int64); ok {
		return v
	}
	return def
}

func (a args) has(name string) bool {
	_, ok := a[name]
	return ok
}

func (a args) flag(name string) bool {
	b, _ := a[name].(bool)
	return b
}

func (a args) object(name string) map[string]any {
	m, _ := a[name].(map[string]any)
	return m
}

func (a args) doc(name string) []byte {
	b, _ := a[name].([]byte)
	return b
}

// decodeArgs decodes the raw arguments of a call against params. Unknown
// and ill-typed arguments are reported first (in name order), then the
// first missing required one. A JSON null counts as absent.
func decodeArgs(raw json.RawMessage, params []param) (args, error) {
	fields := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' {
			return nil, argErrorf("invalid type: expected an object of named arguments")
		}
		if err := json.Unmarshal(t, &fields); err != nil {
			return nil, argErrorf("invalid arguments: %v", err)
		}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	out := args{}
	for _, name := range names {
		i := slices.IndexFunc(params, func(p param) bool { return p.name == name })
		if i < 0 {
			return nil, argErrorf("unknown field %s, %s", name, expected(params))
		}
		v := bytes.TrimSpace(fields[name])
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		val, err := params[i].decode(v)
		if err != nil {
			return nil, err
		}
		out[name] = val
	}
	for _, p := range params {
		if _, ok := out[p.name]; p.required && !ok {
			return nil, argErrorf("missing field %s", p.name)
		}
	}
	return out, nil
}

func expected(params []param) string {
	if len(params) == 0 {
		return "this tool takes no arguments"
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return "expected one of " + strings.Join(names, ", ")
}

// decode reads one argument value. Integers and booleans written as
// strings ("30", "true") are accepted, as some clients send every value as
// text.
func (p param) decode(v json.RawMessage) (any, error) {
	invalid := func(want string) error {
		return argErrorf("invalid type for field %s: expected %s", p.name, want)
	}
	switch p.kind {
	case kindString:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, invalid("a string")
		}
		if p.required && strings.TrimSpace(s) == "" {
			return nil, argErrorf("invalid value for field %s: must not be empty", p.name)
		}
		return s, nil
	case kindInt:
		n, ok := integer(v)
		if !ok {
			return nil, invalid("an integer")
		}
		if n < p.min {
			return nil, argErrorf("invalid value for field %s: %d is below the minimum %d", p.name, n, p.min)
		}
		if p.max > 0 && n > p.max {
			if !p.clamp {
				return nil, argErrorf("invalid value for field %s: %d is above the maximum %d", p.name, n, p.max)
			}
			n = p.max
		}
		return n, nil
	case kindBool:
		var b bool
		if json.Unmarshal(v, &b) == nil {
			return b, nil
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
				return b, nil
			}
		}
		return nil, invalid("a boolean")
	case kindObject:
		if v[0] != '{' {
			return nil, invalid("an object")
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if d.Decode(&m) != nil {
			return nil, invalid("an object")
		}
		return m, nil
	case kindWorkflow:
		switch v[0] {
		case '{':
			return []byte(v), nil
		case '"':
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, invalid("a workflow document")
			}
			return []byte(s), nil
		}
		return nil, invalid("a workflow document (a JSON object, or a string holding one)")
	}
	return nil, fmt.Errorf("mcpbridge: parameter %s has no kind", p.name)
}

// integer reads a JSON number with no fraction, or a string holding one.
func integer(v json.RawMessage) (int64, bool) {
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0, false
		}
		v = json.RawMessage(strings.TrimSpace(s))
		if len(v) == 0 {
			return 0, false
		}
	}
	var n json.Number
	if json.Unmarshal(v, &n) != nil {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// schema is the JSON Schema of a tool's arguments.
func schema(params []param) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range params {
		s := map[string]any{"description": p.desc}
		switch p.kind {
		case kindString:
			s["type"] = "string"
			if p.required {
				s["minLength"] = 1
			}
		case kindInt:
			s["type"] = "integer"
			s["minimum"] = p.min
			if p.max > 0 {
				s["maximum"] = p.max
			}
		case kindBool:
			s["type"] = "boolean"
		case kindObject, kindWorkflow:
			s["type"] = "object"
		}
		if p.def != nil {
			s["default"] = p.def
		}
		props[p.name] = s
		if p.required {
			required = append(required, p.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}
