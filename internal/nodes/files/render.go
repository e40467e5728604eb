package files

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/svcrun/svc/internal/value"
)

// textOf is the content as text: a string as it is, an object or array as
// pretty JSON, anything else as value.Text.
func textOf(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any, []any:
		return string(prettyJSON(v))
	}
	return value.Text(v)
}

// renderText writes txt, md and html files: the content as text.
func renderText(v any, _ *slog.Logger) ([]byte, error) { return []byte(textOf(v)), nil }

// prettyJSON renders v as JSON indented by two spaces, without escaping
// HTML characters. Values JSON cannot hold (non-finite numbers) are written
// as value.Encode writes them.
func prettyJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		_ = json.Indent(&buf, value.Encode(v), "", "  ")
		return buf.Bytes()
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// renderJSON writes a json file: text holding valid JSON is indented, other
// text becomes a JSON string, any other value is encoded.
func renderJSON(v any, _ *slog.Logger) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return prettyJSON(v), nil
	}
	if trimmed := strings.TrimSpace(s); json.Valid([]byte(trimmed)) {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(trimmed), "", "  "); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return prettyJSON(s), nil
}

// renderCSV writes a csv file. Text is written as it is. An array of
// objects (or one object) becomes a table with a header row; any other
// array becomes one row per entry, an array entry giving its cells and any
// other entry one cell. Other values are written as text.
func renderCSV(v any, _ *slog.Logger) ([]byte, error) {
	switch t := v.(type) {
	case string:
		return []byte(t), nil
	case map[string]any:
		return csvTable([]any{t})
	case []any:
		return csvTable(t)
	}
	return []byte(value.Text(v)), nil
}

func csvTable(rows []any) ([]byte, error) {
	var records [][]string
	if objs, ok := objects(rows); ok && len(objs) > 0 {
		cols := columns(objs)
		records = append(records, cols)
		for _, o := range objs {
			rec := make([]string, len(cols))
			for i, c := range cols {
				rec[i] = value.Text(o[c])
			}
			records = append(records, rec)
		}
	} else {
		for _, r := range rows {
			cells, ok := r.([]any)
			if !ok {
				cells = []any{r}
			}
			rec := make([]string, len(cells))
			for i, c := range cells {
				rec[i] = value.Text(c)
			}
			records = append(records, rec)
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(records); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// objects returns rows as objects when every row is one.
func objects(rows []any) ([]map[string]any, bool) {
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		o, ok := r.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, o)
	}
	return out, true
}

// columns are the sorted keys of the first object, then the keys each later
// object adds, sorted, in the order the objects come.
func columns(objs []map[string]any) []string {
	seen := map[string]bool{}
	var cols []string
	for _, o := range objs {
		var added []string
		for k := range o {
			if !seen[k] {
				seen[k] = true
				added = append(added, k)
			}
		}
		slices.Sort(added)
		cols = append(cols, added...)
	}
	return cols
}
