package files

import (
	"bytes"
	"compress/zlib"
	"io"
	"regexp"
	"strings"
	"testing"
)

func TestLatin1(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		replaced int
	}{
		{"plain", "plain", 0},
		{"héllo → 世界", "h\xe9llo ? ??", 3},
		{"a\x01b\u0085c\x7fd", "a?b?c?d", 3},
		{"tab\there\r\nnext\rlast\n", "tab    here\nnext\nlast\n", 0},
		{"\u00a0\u00ff\u0100", "\xa0\xff?", 1},
		{"bad \xff utf-8", "bad ? utf-8", 1},
	}
	for _, tt := range tests {
		got, n := latin1(tt.in)
		if got != tt.want || n != tt.replaced {
			t.Errorf("latin1(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.replaced)
		}
	}
}

// pdfStreams returns the inflated content of every Flate stream in a PDF.
func pdfStreams(t *testing.T, pdf []byte) []byte {
	t.Helper()
	var out []byte
	re := regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`)
	for _, m := range re.FindAllSubmatch(pdf, -1) {
		r, err := zlib.NewReader(bytes.NewReader(m[1]))
		if err != nil {
			continue
		}
		b, err := io.ReadAll(r)
		if err != nil && len(b) == 0 {
			continue
		}
		out = append(out, b...)
	}
	return out
}

func TestTextToFilePDF(t *testing.T) {
	t.Parallel()
	raw := map[string]any{"format": "pdf", "filename": "report", "content": "héllo → 世界\nsecond (line)"}
	out, data, env := textFile(t, raw, nil)
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		t.Fatalf("pdf starts with %q; want %%PDF-", data[:min(len(data), 8)])
	}
	if out["filename"] != "report.pdf" || out["mime_type"] != "application/pdf" {
		t.Errorf("filename, mime_type = %v, %v; want report.pdf, application/pdf", out["filename"], out["mime_type"])
	}
	if !env.Logged("count=3") {
		t.Errorf("log = %q; want the 3 replaced characters counted", env.Log())
	}
	if !bytes.Contains(data, []byte("/BaseFont /Helvetica")) || bytes.Contains(data, []byte("/FontFile")) {
		t.Errorf("pdf does not use the core font Helvetica without an embedded font file")
	}
	text := pdfStreams(t, data)
	for _, want := range []string{"(h\xe9llo ? ??)", `(second \(line\))`} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("page content lacks %q:\n%s", want, text)
		}
	}
	_, again, _ := textFile(t, raw, nil)
	if !bytes.Equal(again, data) {
		t.Errorf("the same input gave different PDF bytes")
	}
}

func TestTextToFilePDFNoReplacementLogged(t *testing.T) {
	t.Parallel()
	_, _, env := textFile(t, map[string]any{"format": "pdf", "content": "only Latin-1: ÀÉÎõü"}, nil)
	if env.Logged("count=") {
		t.Errorf("log = %q; want no replacement note", env.Log())
	}
}

func TestTextToFilePDFWrapsAndPages(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 400) + "\n" + strings.Repeat("line\n", 120)
	_, data, _ := textFile(t, map[string]any{"format": "pdf", "content": long}, nil)
	pages := bytes.Count(data, []byte("/Type /Page")) - bytes.Count(data, []byte("/Type /Pages"))
	if pages < 2 {
		t.Errorf("pages = %d; want the long text to take more than one page", pages)
	}
	if n := bytes.Count(pdfStreams(t, data), []byte("(line)")); n != 120 {
		t.Errorf("lines shown = %d; want 120", n)
	}
}
