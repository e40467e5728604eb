package node

import (
	"fmt"
	"math"
	"strings"

	"github.com/svcrun/svc/internal/value"
)

// Config is a node's config after decoding: every declared field holds a
// value of its kind, or its default. Undeclared keys are ignored.
type Config struct {
	fields []Field
	vals   []any
}

// Decode reads a raw config (expressions already evaluated) under the rules
// every node shares (spec/nodes.md rules 1 to 3): a blank field uses its
// default, a required blank field fails, a number or boolean holding
// unreadable text fails with INVALID_CONFIG naming the field, and a valid
// number outside its range is clamped. The first failing field is reported.
func (s *Spec) Decode(raw map[string]any) (Config, error) {
	c := Config{fields: s.Fields, vals: make([]any, len(s.Fields))}
	for i := range s.Fields {
		f := &s.Fields[i]
		v, err := f.decode(raw[f.Name])
		if err != nil {
			return Config{}, err
		}
		c.vals[i] = v
	}
	return c, nil
}

func (f *Field) fail(format string, args ...any) *Error {
	code := f.Code
	if code == "" {
		code = CodeInvalidConfig
	}
	return &Error{Code: code, Field: f.Name, Message: f.Name + ": " + fmt.Sprintf(format, args...)}
}

func (f *Field) decode(v any) (any, error) {
	blank := value.Blank(v)
	if f.Kind == KindAny {
		blank = v == nil
	}
	if blank {
		if f.Required {
			code := f.MissingCode
			if code == "" {
				code = CodeInvalidConfig
			}
			return nil, &Error{Code: code, Field: f.Name, Message: f.Name + ": is required"}
		}
		return f.Default, nil
	}
	if s, ok := v.(string); ok && f.NoExpressions && strings.Contains(s, "{{") {
		return nil, f.fail("expressions are not allowed in this field")
	}
	switch f.Kind {
	case KindText, KindAny:
		return v, nil
	case KindNumber, KindInteger:
		n, ok := value.NumberOrText(v)
		if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, f.fail("is not a number")
		}
		if f.Kind == KindInteger && n != math.Trunc(n) {
			return nil, f.fail("is not a whole number")
		}
		if f.Min != nil && n < *f.Min {
			if f.Strict {
				return nil, f.fail("must be at least %v", *f.Min)
			}
			n = *f.Min
		}
		if f.Max != nil && n > *f.Max {
			if f.Strict {
				return nil, f.fail("must be at most %v", *f.Max)
			}
			n = *f.Max
		}
		if f.Kind == KindInteger {
			if math.Abs(n) > 1<<53 {
				return nil, f.fail("is out of range")
			}
			return int(n), nil
		}
		return n, nil
	case KindBoolean:
		b, ok := readBool(v)
		if !ok {
			return nil, f.fail("is not true or false")
		}
		return b, nil
	case KindEnum:
		s, ok := v.(string)
		if !ok {
			return nil, f.fail("must be one of %s", strings.Join(f.Enum, ", "))
		}
		s = strings.TrimSpace(s)
		for _, e := range f.Enum {
			if s == e || (f.FoldCase && strings.EqualFold(s, e)) {
				return e, nil
			}
		}
		return nil, f.fail("must be one of %s", strings.Join(f.Enum, ", "))
	case KindJSON, KindObject, KindArray:
		if s, ok := v.(string); ok {
			parsed, err := value.DecodeString(s)
			if err != nil {
				return nil, f.fail("is not valid JSON: %v", err)
			}
			v = parsed
		}
		if f.Kind == KindObject {
			if _, ok := v.(map[string]any); !ok {
				return nil, f.fail("must be a JSON object")
			}
		}
		if f.Kind == KindArray {
			if _, ok := v.([]any); !ok {
				return nil, f.fail("must be a JSON array")
			}
		}
		return v, nil
	case KindList:
		return readList(f, v)
	}
	return nil, f.fail("has an unknown kind")
}

func readBool(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	default:
		if n, ok := value.Number(v); ok && (n == 0 || n == 1) {
			return n == 1, true
		}
	}
	return false, false
}

func readList(f *Field, v any) (any, error) {
	switch t := v.(type) {
	case string:
		var out []string
		for part := range strings.SplitSeq(t, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, e := range t {
			switch e.(type) {
			case map[string]any, []any:
				return nil, f.fail("entry %d is not text", i)
			}
			if s := strings.TrimSpace(value.Text(e)); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, f.fail("must be a list or comma-separated text")
}

func (c Config) index(name string) int {
	for i := range c.fields {
		if c.fields[i].Name == name {
			return i
		}
	}
	panic("node: config has no field " + name)
}

// Value returns a field's decoded value.
func (c Config) Value(name string) any { return c.vals[c.index(name)] }

// Blank reports whether a field holds nothing (null or blank text).
func (c Config) Blank(name string) bool { return value.Blank(c.Value(name)) }

// String returns a field as text (value.Text of its value).
func (c Config) String(name string) string { return value.Text(c.Value(name)) }

// Float returns a number field.
func (c Config) Float(name string) float64 {
	f, _ := value.Number(c.Value(name))
	return f
}

// Int returns an integer field.
func (c Config) Int(name string) int {
	switch v := c.Value(name).(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// Bool returns a boolean field.
func (c Config) Bool(name string) bool {
	b, _ := c.Value(name).(bool)
	return b
}

// List returns a list field.
func (c Config) List(name string) []string {
	l, _ := c.Value(name).([]string)
	return l
}

// Object returns an object field, or nil.
func (c Config) Object(name string) map[string]any {
	m, _ := c.Value(name).(map[string]any)
	return m
}

// Array returns an array field, or nil.
func (c Config) Array(name string) []any {
	a, _ := c.Value(name).([]any)
	return a
}

// CredentialRef reports whether v names a saved credential, as a
// credential-resolved field may: {"credential": "<id>"}.
func CredentialRef(v any) (id string, ok bool) {
	m, isObj := v.(map[string]any)
	if !isObj || len(m) != 1 {
		return "", false
	}
	id, ok = m["credential"].(string)
	return id, ok && id != ""
}
