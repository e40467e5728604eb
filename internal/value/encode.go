package value

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the compact JSON of v to dst, as encoding/json writes it
// with HTML escaping off: object keys sorted, invalid UTF-8 replaced by
// U+FFFD, U+2028 and U+2029 escaped. It handles the value model directly and
// falls back to encoding/json for other types; a value JSON cannot hold (a
// non-finite float) makes ok false.
func AppendJSON(dst []byte, v any) (out []byte, ok bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendString(dst, t), true
	case bool:
		return strconv.AppendBool(dst, t), true
	case int:
		return strconv.AppendInt(dst, int64(t), 10), true
	case float64:
		return appendFloat(dst, t)
	case map[string]any:
		if len(t) == 0 {
			return append(dst, "{}"...), true
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			if dst, ok = AppendJSON(dst, t[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = AppendJSON(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	b, err := encode(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendFloat writes a float as encoding/json does.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

const hex = "0123456789abcdef"

// AppendJSONString appends s as a JSON string.
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }

// appendString writes a JSON string.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
