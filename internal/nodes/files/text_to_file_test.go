package files

import (
	"encoding/base64"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// textFile runs Text to File with a raw config and input, and returns the
// output, the file's bytes and the env.
func textFile(t *testing.T, raw map[string]any, in any) (map[string]any, []byte, *nodetest.Env) {
	t.Helper()
	env := nodetest.New(in)
	res, err := nodetest.Run(t.Context(), TextToFileSpec(), raw, env)
	if err != nil {
		t.Fatalf("Run(%v) error: %v", raw, err)
	}
	out, ok := res.Output.(map[string]any)
	if !ok {
		t.Fatalf("Output = %#v; want an object", res.Output)
	}
	files, _ := out["files"].([]any)
	if len(files) != 1 || out["count"] != 1 || out["source"] != "text_to_file" {
		t.Fatalf("Output = %v; want one file, count 1, source text_to_file", out)
	}
	f := files[0].(map[string]any)
	data, err := base64.StdEncoding.DecodeString(f["data"].(string))
	if err != nil {
		t.Fatalf("data is not standard base64: %v", err)
	}
	if f["size"] != len(data) || out["bytes"] != len(data) {
		t.Errorf("size = %v, bytes = %v; want %d", f["size"], out["bytes"], len(data))
	}
	if f["name"] != out["filename"] || f["mime_type"] != out["mime_type"] {
		t.Errorf("file %v does not match output filename %v, mime_type %v", f, out["filename"], out["mime_type"])
	}
	return out, data, env
}

func TestTextToFileFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, content, name, mime, data string
	}{
		{"txt", "hello\nworld", "output.txt", "text/plain", "hello\nworld"},
		{"md", "# Title", "output.md", "text/markdown", "# Title"},
		{"html", "<p>a & b</p>", "output.html", "text/html", "<p>a & b</p>"},
		{"csv", "a,b\n1,2\n", "output.csv", "text/csv", "a,b\n1,2\n"},
		{"json", `{"a":1}`, "output.json", "application/json", "{\n  \"a\": 1\n}"},
		{"PDF", "x", "output.pdf", "application/pdf", ""},
		{"Docx", "x", "output.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ""},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			out, data, _ := textFile(t, map[string]any{"format": tt.format, "content": tt.content}, nil)
			if out["filename"] != tt.name || out["mime_type"] != tt.mime {
				t.Errorf("filename, mime_type = %v, %v; want %v, %v", out["filename"], out["mime_type"], tt.name, tt.mime)
			}
			if tt.data != "" && string(data) != tt.data {
				t.Errorf("data = %q; want %q", data, tt.data)
			}
		})
	}
}

func TestTextToFileFilename(t *testing.T) {
	t.Parallel()
	tests := []struct {
		filename any
		format   string
		want     string
	}{
		{nil, "txt", "output.txt"},
		{"  ", "md", "output.md"},
		{"report", "pdf", "report.pdf"},
		{"report.pdf", "pdf", "report.pdf"},
		{"REPORT.PDF", "pdf", "REPORT.PDF"},
		{"notes.txt", "md", "notes.txt.md"},
		{"/etc/passwd", "txt", "passwd.txt"},
		{"../../x.csv", "csv", "x.csv"},
		{`C:\Users\me\data.json`, "json", "data.json"},
		{"dir/", "txt", "dir.txt"},
		{"..", "txt", "output.txt"},
		{"/", "html", "output.html"},
		{42, "txt", "42.txt"},
	}
	for _, tt := range tests {
		out, _, _ := textFile(t, map[string]any{"filename": tt.filename, "format": tt.format, "content": "x"}, nil)
		if out["filename"] != tt.want {
			t.Errorf("filename %#v, format %s: got %v; want %v", tt.filename, tt.format, out["filename"], tt.want)
		}
	}
}

func TestTextToFileMimeType(t *testing.T) {
	t.Parallel()
	out, _, _ := textFile(t, map[string]any{"format": "txt", "mime_type": " text/x-log ", "content": "x"}, nil)
	if out["mime_type"] != "text/x-log" {
		t.Errorf("mime_type = %v; want text/x-log", out["mime_type"])
	}
}

func TestTextToFileInvalidFormat(t *testing.T) {
	t.Parallel()
	for _, f := range []any{"xlsx", 3, "txt2"} {
		_, err := nodetest.Run(t.Context(), TextToFileSpec(), map[string]any{"format": f}, nodetest.New("x"))
		if got := node.CodeOf(err); got != CodeInvalidFormat {
			t.Errorf("format %#v: code %v (%v); want %v", f, got, err, CodeInvalidFormat)
		}
	}
	_, err := (&TextToFile{Format: "odt"}).Run(t.Context(), nodetest.New("x"))
	if got := node.CodeOf(err); got != CodeInvalidFormat {
		t.Errorf("TextToFile{Format: odt}: code %v; want %v", got, CodeInvalidFormat)
	}
}

func TestTextToFileContentFallsBackToInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		content any
		in      any
		want    string
	}{
		{nil, "from input", "from input"},
		{"  ", "from input", "from input"},
		{"", map[string]any{"b": 1, "a": "<x>"}, "{\n  \"a\": \"<x>\",\n  \"b\": 1\n}"},
		{"set", "from input", "set"},
		{nil, nil, ""},
		{nil, 2.5, "2.5"},
		{true, "ignored", "true"},
		{[]any{1, "a"}, nil, "[\n  1,\n  \"a\"\n]"},
	}
	for _, tt := range tests {
		_, data, _ := textFile(t, map[string]any{"content": tt.content}, tt.in)
		if string(data) != tt.want {
			t.Errorf("content %#v, input %#v: got %q; want %q", tt.content, tt.in, data, tt.want)
		}
	}
}

func TestTextToFileCSV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content any
		want    string
	}{
		{"text", "x;y\n", "x;y\n"},
		{"objects", []any{
			map[string]any{"b": 2, "a": "one"},
			map[string]any{"a": "two, quoted \"x\"", "d": nil, "c": true},
			map[string]any{"e": map[string]any{"k": 1}, "b": 3.5},
		}, "a,b,c,d,e\none,2,,,\n\"two, quoted \"\"x\"\"\",,true,,\n,3.5,,,\"{\"\"k\"\":1}\"\n"},
		{"header from first object then new keys", []any{
			map[string]any{"z": 1},
			map[string]any{"y": 2, "x": 3, "z": 4},
		}, "z,x,y\n1,,\n4,3,2\n"},
		{"one object", map[string]any{"n": 1, "m": "x"}, "m,n\nx,1\n"},
		{"arrays", []any{[]any{"h1", "h2"}, []any{1, nil, "a\nb"}}, "h1,h2\n1,,\"a\nb\"\n"},
		{"scalars", []any{"a", 2}, "a\n2\n"},
		{"empty", []any{}, ""},
		{"number", 7, "7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, data, _ := textFile(t, map[string]any{"format": "csv", "content": tt.content}, nil)
			if string(data) != tt.want {
				t.Errorf("csv of %v: got %q; want %q", tt.content, data, tt.want)
			}
		})
	}
}

func TestTextToFileJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content any
		want    string
	}{
		{"valid text is indented", ` {"b":[1,2],"a":"x"} `, "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"x\"\n}"},
		{"valid scalar text", "42", "42"},
		{"other text is a string", "hello \"you\" <b>", `"hello \"you\" <b>"`},
		{"broken JSON text is a string", `{"a":`, `"{\"a\":"`},
		{"object", map[string]any{"k": []any{true, nil}}, "{\n  \"k\": [\n    true,\n    null\n  ]\n}"},
		{"number", 1.5, "1.5"},
		{"boolean", false, "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, data, _ := textFile(t, map[string]any{"format": "json", "content": tt.content}, nil)
			if string(data) != tt.want {
				t.Errorf("json of %#v: got %q; want %q", tt.content, data, tt.want)
			}
		})
	}
}

func TestTextToFileSpec(t *testing.T) {
	t.Parallel()
	s := TextToFileSpec()
	if s.TypeID != "text_to_file" || s.DisplayName != "Text to File" || s.Category != node.CategoryUtility || !s.Enabled {
		t.Errorf("spec = %s %q %s enabled %v; want text_to_file \"Text to File\" utility enabled", s.TypeID, s.DisplayName, s.Category, s.Enabled)
	}
	ins, outs := s.Ports(nil)
	if len(ins) != 1 || ins[0] != node.InPort || len(outs) != 1 || outs[0] != node.OutPort {
		t.Errorf("ports = %v, %v; want [in], [out]", ins, outs)
	}
	if _, ok := node.Default().Lookup("text_to_file"); !ok {
		t.Errorf("text_to_file is not registered")
	}
}
