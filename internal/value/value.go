// Package value holds the JSON value model shared by documents, expressions,
// the engine and nodes.
//
// A value is one of: nil, bool, int, float64, string, []any, map[string]any.
// Integers that fit in an int decode as int (so that expressions do integer
// arithmetic on them); every other number decodes as float64. Values handed
// between nodes are shared, never copied: code that receives a value must not
// mutate it.
package value

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Decode parses JSON text into a value.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return FromJSON(v)
}

// DecodeString is Decode for a string.
func DecodeString(s string) (any, error) { return Decode([]byte(s)) }

// FromJSON converts a tree decoded by encoding/json with UseNumber into the
// value model, replacing json.Number in place. A number beyond the range of
// a float64 (1e400) is an error, as encoding/json makes it for a float64.
func FromJSON(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		return number(string(t))
	case map[string]any:
		for k, e := range t {
			n, err := FromJSON(e)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
	case []any:
		for i, e := range t {
			n, err := FromJSON(e)
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
	}
	return v, nil
}

func number(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(n), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %.40s is out of range", s)
	}
	return f, nil
}

// Encode renders a value as compact JSON, with <, > and & written as they
// are (see AppendJSON). A value JSON cannot hold (a non-finite float) is
// written as null.
func Encode(v any) []byte {
	b, ok := AppendJSON(nil, v)
	if !ok {
		return []byte("null")
	}
	return b
}

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TypeName is the JSON type of v: string, number, boolean, object, array or null.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "string"
}

// Text renders v for a text field: strings as they are, null as the empty
// string, numbers and booleans in their JSON form, objects and arrays as
// compact JSON.
func Text(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(t)
	case int:
		return strconv.Itoa(t)
	case float64:
		return formatFloat(t)
	}
	if f, ok := Number(v); ok {
		return formatFloat(f)
	}
	return string(Encode(v))
}

// formatFloat writes f as JSON (and JavaScript) do: plain decimals, with an
// exponent only below 1e-6 or from 1e21 on, written e-7 rather than e-07.
func formatFloat(f float64) string {
	if abs := math.Abs(f); abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
		s = s[:n-2] + s[n-1:]
	}
	return s
}

// Number reports v as a float64 when it is a JSON number.
func Number(v any) (float64, bool) {
	switch t := v.(type) {
	case int:
		return float64(t), true
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int32:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float32:
		return float64(t), true
	case uint:
		return float64(t), true
	case uint32:
		return float64(t), true
	case int8, int16, uint8, uint16:
		return reflect.ValueOf(t).Convert(reflect.TypeFor[float64]()).Float(), true
	}
	return 0, false
}

// NumberOrText reports v as a number when it is a JSON number or text that
// reads as a finite number ("12", " 3.5 ").
func NumberOrText(v any) (float64, bool) {
	if f, ok := Number(v); ok {
		return f, true
	}
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// Blank reports whether v counts as an unset field: null, or text that is
// empty or only white space.
func Blank(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(t) == ""
	}
	return false
}

// Normalize converts a Go value produced outside the value model (by an
// expression, say) into it: other integer and float types, typed slices and
// maps, time values (RFC 3339 text) and structs (through their JSON form).
// It fails on non-finite numbers, which JSON cannot represent.
func Normalize(v any) (any, error) {
	switch t := v.(type) {
	case nil, string, bool, int:
		return v, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("result %v is not a finite number", t)
		}
		return v, nil
	case map[string]any:
		for _, e := range t {
			if !plain(e) {
				return normalizeMap(t)
			}
		}
		return v, nil
	case []any:
		for _, e := range t {
			if !plain(e) {
				return normalizeSlice(t)
			}
		}
		return v, nil
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano), nil
	case time.Duration:
		return t.String(), nil
	case json.Number:
		return number(string(t))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt {
			return int(u), nil
		}
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return Normalize(rv.Float())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		out := make([]any, rv.Len())
		for i := range out {
			e, err := Normalize(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			e, err := Normalize(it.Value().Interface())
			if err != nil {
				return nil, err
			}
			out[it.Key().String()] = e
		}
		return out, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return Normalize(rv.Elem().Interface())
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return nil, fmt.Errorf("a %s is not a JSON value", rv.Kind())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("a %T is not a JSON value", v)
	}
	return Decode(b)
}

func plain(v any) bool {
	switch t := v.(type) {
	case nil, string, bool, int:
		return true
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	case map[string]any:
		for _, e := range t {
			if !plain(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range t {
			if !plain(e) {
				return false
			}
		}
		return true
	}
	return false
}

func normalizeMap(m map[string]any) (any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		n, err := Normalize(e)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

func normalizeSlice(s []any) (any, error) {
	out := make([]any, len(s))
	for i, e := range s {
		n, err := Normalize(e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// Equal reports whether two values are the same JSON value. Numbers compare
// by value whatever their Go type.
func Equal(a, b any) bool {
	if fa, ok := Number(a); ok {
		fb, ok := Number(b)
		return ok && fa == fb
	}
	switch ta := a.(type) {
	case nil:
		return b == nil
	case string:
		tb, ok := b.(string)
		return ok && ta == tb
	case bool:
		tb, ok := b.(bool)
		return ok && ta == tb
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for i := range ta {
			if !Equal(ta[i], tb[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for k, va := range ta {
			vb, ok := tb[k]
			if !ok || !Equal(va, vb) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
