package files

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// docxParagraphs checks that a .docx is a zip with the parts Word needs and
// returns the text of each paragraph of word/document.xml.
func docxParagraphs(t *testing.T, data []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("docx is not a zip: %v", err)
	}
	parts := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		parts[f.Name] = b
	}
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml"} {
		if _, ok := parts[name]; !ok {
			t.Fatalf("docx lacks %s; has %v", name, slices.Sorted(func(yield func(string) bool) {
				for k := range parts {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
	dec := xml.NewDecoder(bytes.NewReader(parts["word/document.xml"]))
	var paras []string
	var cur *strings.Builder
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("word/document.xml is not well formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "p":
				cur = &strings.Builder{}
			case "t":
				inText = true
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "p":
				paras = append(paras, cur.String())
				cur = nil
			case "t":
				inText = false
			}
		case xml.CharData:
			if inText && cur != nil {
				cur.Write(tok)
			}
		}
	}
	return paras
}

func TestTextToFileDOCX(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content any
		in      any
		want    []string
	}{
		{"lines", "first line\r\n  indented <&> \"line\"\n\nlast é 世界\n", nil, []string{"first line", "  indented <&> \"line\"", "", "last é 世界"}},
		{"empty", "", nil, []string{""}},
		{"control character", "a\x01b", nil, []string{"a\uFFFDb"}},
		{"input", nil, "from input\ttab", []string{"from input\ttab"}},
		{"object", map[string]any{"a": 1}, nil, []string{"{", `  "a": 1`, "}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, data, _ := textFile(t, map[string]any{"format": "docx", "filename": "letter", "content": tt.content}, tt.in)
			if out["filename"] != "letter.docx" {
				t.Errorf("filename = %v; want letter.docx", out["filename"])
			}
			if got := docxParagraphs(t, data); !slices.Equal(got, tt.want) {
				t.Errorf("paragraphs = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestTextToFileDOCXDeterministic(t *testing.T) {
	t.Parallel()
	raw := map[string]any{"format": "docx", "content": "same"}
	_, a, _ := textFile(t, raw, nil)
	_, b, _ := textFile(t, raw, nil)
	if !bytes.Equal(a, b) {
		t.Errorf("the same input gave different .docx bytes")
	}
}

// TestTextToFileDOCXLibreOffice converts the .docx with LibreOffice, when
// it is installed, to show that a real word processor reads it.
func TestTextToFileDOCXLibreOffice(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("libreoffice")
	if err != nil {
		if bin, err = exec.LookPath("soffice"); err != nil {
			t.Skip("LibreOffice is not installed")
		}
	}
	_, data, _ := textFile(t, map[string]any{"format": "docx", "content": "Hello from svc\nsecond line é"}, nil)
	dir := t.TempDir()
	src := filepath.Join(dir, "letter.docx")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-env:UserInstallation=file://"+filepath.Join(dir, "profile"),
		"--headless", "--convert-to", "pdf", "--outdir", dir, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "letter.pdf"))
	if err != nil {
		t.Fatalf("LibreOffice made no PDF: %v", err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("converted file starts with %q; want %%PDF", pdf[:min(len(pdf), 8)])
	}
}
