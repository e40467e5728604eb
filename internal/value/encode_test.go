package value

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// stdJSON is encoding/json without HTML escaping: what AppendJSON matches.
func stdJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	values := []any{
		nil, true, false, 0, -7, 1 << 62, 0.1, -2.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.SmallestNonzeroFloat64, math.MaxFloat64,
		"", "plain", "quote \" backslash \\ slash /", "ctl \x00\x01\x1f\t\n\r\b\f", "<a>&amp;</a>", "é ü 世界 🙂",
		"bad \xff utf8 \xc3", "line \u2028 para \u2029", "\x7f del",
		map[string]any{}, []any{}, map[string]any{"b": 1, "a": []any{nil, "x", map[string]any{"z": false}}, "": "empty key"},
		[]any{1, 2.5, "three", []any{}, map[string]any{"k\"ey": "v"}},
	}
	for _, v := range values {
		got, ok := AppendJSON(nil, v)
		want, err := stdJSON(v)
		if !ok || err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendJSON(%#v) = %s, %v; want %s (%v)", v, got, ok, want, err)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(-1), []any{1, math.Inf(1)}} {
		if _, ok := AppendJSON(nil, v); ok {
			t.Errorf("AppendJSON(%v) ok; want a refusal", v)
		}
	}
	// Types outside the value model go through encoding/json.
	if got, ok := AppendJSON(nil, []string{"a"}); !ok || string(got) != `["a"]` {
		t.Errorf("AppendJSON([]string) = %s", got)
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x\u2028y",null,true,{"":"\ud800"}],"b":1e300}`))
	f.Add([]byte(`"\u0000\u007f\u00ff"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		got, ok := AppendJSON(nil, v)
		want, err := stdJSON(v)
		if !ok || err != nil || !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON = %s, %v; encoding/json %s, %v", got, ok, want, err)
		}
	})
}
