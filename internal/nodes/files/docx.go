package files

import (
	"bytes"
	"log/slog"
	"strings"

	"github.com/gomutex/godocx"
)

// renderDOCX writes a Word document with one paragraph per line of the
// content's text. A final line break does not start another paragraph;
// characters XML cannot hold become U+FFFD.
func renderDOCX(v any, _ *slog.Logger) ([]byte, error) {
	text := strings.ReplaceAll(textOf(v), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimSuffix(text, "\n")
	doc, err := godocx.NewDocument()
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(text, "\n") {
		doc.AddParagraph(line)
	}
	var buf bytes.Buffer
	if err := doc.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
