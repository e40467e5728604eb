package value

import (
	"errors"
	"strconv"
	"strings"
)

// Lookup follows a dot path ("body.items.0.name") into v. A segment that is a
// whole number indexes an array. An empty path returns v itself. It reports
// false when a segment is missing, an index is out of range, or the path
// steps into a scalar.
func Lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	cur := v
	for seg := range strings.SplitSeq(path, ".") {
		switch t := cur.(type) {
		case map[string]any:
			e, ok := t[seg]
			if !ok {
				return nil, false
			}
			cur = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Pointer is a parsed RFC 6901 JSON Pointer: a list of reference tokens.
// The empty pointer addresses the whole document; "/" addresses the member
// whose name is the empty string.
type Pointer []string

// ErrPointerSyntax is returned by ParsePointer for text that is not a JSON
// Pointer.
var ErrPointerSyntax = errors.New("a JSON pointer is empty or starts with /")

// ParsePointer parses an RFC 6901 pointer, decoding ~1 to / and ~0 to ~.
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return nil, ErrPointerSyntax
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(p); j++ {
			if p[j] != '~' {
				b.WriteByte(p[j])
				continue
			}
			if j+1 >= len(p) || (p[j+1] != '0' && p[j+1] != '1') {
				return nil, errors.New("~ in a JSON pointer must be followed by 0 or 1")
			}
			if p[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		parts[i] = b.String()
	}
	return Pointer(parts), nil
}

// Get resolves the pointer against v. It reports false when a member is
// missing, an array index is not a canonical decimal in range, or a token
// steps into a scalar. "-" (the element after the last) is never found.
func (p Pointer) Get(v any) (any, bool) {
	cur := v
	for _, tok := range p {
		switch t := cur.(type) {
		case map[string]any:
			e, ok := t[tok]
			if !ok {
				return nil, false
			}
			cur = e
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// arrayIndex accepts the RFC 6901 array-index form: "0" or a decimal
// without leading zeros.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil
}

// Size estimates the bytes a value holds in memory: its strings, numbers and
// the headers of its maps and slices. It is an estimate for accounting, not
// an exact measure.
func Size(v any) int64 {
	switch t := v.(type) {
	case nil:
		return 0
	case string:
		return 16 + int64(len(t))
	case bool, int, float64:
		return 8
	case map[string]any:
		n := int64(48)
		for k, e := range t {
			n += 32 + int64(len(k)) + Size(e)
		}
		return n
	case []any:
		n := int64(24 + 16*len(t))
		for _, e := range t {
			n += Size(e)
		}
		return n
	}
	return 16
}
