package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// reply is what a tool returns on success: a JSON object as structured
// content, and optionally a note shown before its JSON text.
type reply struct {
	value any
	note  string
}

// hidden reports whether a character is stripped from tool results:
// control characters (tab and line feed are kept), bidirectional controls,
// zero-width characters and Unicode tags (spec/nodes.md section 8). They
// can hide or reorder text a model reads without a person seeing it.
func hidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r >= 0x7f && r <= 0x9f: // DEL and the C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // bidirectional marks
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidirectional embeddings and isolates
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff: // zero-width
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags
		return true
	}
	return false
}

// clean strips hidden characters from s; invalid UTF-8 becomes U+FFFD.
func clean(s string) string {
	for i, r := range s {
		if hidden(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) {
			return strings.Map(func(r rune) rune {
				if hidden(r) {
					return -1
				}
				return r
			}, s)
		}
	}
	return s
}

// cleanValue strips hidden characters from every string of a decoded JSON
// value, object keys included.
func cleanValue(v any) any {
	switch v := v.(type) {
	case string:
		return clean(v)
	case []any:
		for i, e := range v {
			v[i] = cleanValue(e)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[clean(k)] = cleanValue(e)
		}
		return out
	}
	return v
}

// normalize turns any value into plain decoded JSON (maps, slices,
// strings, json.Number, bools, nil) with hidden characters stripped.
func normalize(v any) (any, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return decode(b)
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return cleanValue(out), nil
}

// marshal is compact JSON without HTML escaping (a model reads it).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// success is the tool result of a reply: the cleaned value as structured
// content and as JSON text, after the note when there is one.
func success(r reply) *mcp.CallToolResult {
	v, err := normalize(r.value)
	if err != nil {
		return failure(fmt.Sprintf("The result could not be encoded: %v", err))
	}
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{"result": v}
	}
	text, err := marshal(v)
	if err != nil {
		return failure(fmt.Sprintf("The result could not be encoded: %v", err))
	}
	res := &mcp.CallToolResult{StructuredContent: v}
	if r.note != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: clean(r.note)})
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: string(text)})
	return res
}

// failure is a tool result with isError set and the message as its text.
func failure(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: clean(msg)}}}
}

// output is run output as the bridge returns it: the value (cleaned) when
// its JSON fits max bytes, else the first max bytes of the JSON as text
// (cut at a character boundary, so not valid JSON).
type output struct {
	Data          any  `json:"data"`
	Truncated     bool `json:"truncated"`
	OriginalBytes int  `json:"original_bytes"`
	ReturnedBytes int  `json:"returned_bytes"`
}

func limitOutput(v any, max int) (output, error) {
	v, err := normalize(v)
	if err != nil {
		return output{}, err
	}
	b, err := marshal(v)
	if err != nil {
		return output{}, err
	}
	if len(b) <= max {
		return output{Data: v, OriginalBytes: len(b), ReturnedBytes: len(b)}, nil
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return output{Data: string(b[:n]), Truncated: true, OriginalBytes: len(b), ReturnedBytes: n}, nil
}
