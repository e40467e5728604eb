package files

import (
	"bytes"
	"log/slog"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// pdfDate is the creation and modification date written into every PDF,
// so that the same content always gives the same bytes.
var pdfDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// renderPDF writes an A4 PDF in the core font Helvetica, wrapping lines and
// keeping line breaks. The core font holds Latin-1 only: other characters
// become '?' and their count is logged.
func renderPDF(v any, log *slog.Logger) ([]byte, error) {
	text, replaced := latin1(textOf(v))
	if replaced > 0 {
		log.Info("replaced characters the PDF font cannot show with '?'", "count", replaced)
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(pdfDate)
	pdf.SetModificationDate(pdfDate)
	pdf.SetCatalogSort(true)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 11)
	pdf.MultiCell(0, 5, text, "", "L", false)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// latin1 encodes s one byte per character as the core fonts expect. Line
// ends become "\n" and a tab four spaces; any other control character and
// every character above U+00FF becomes '?', and replaced counts them.
func latin1(s string) (out string, replaced int) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || (r >= 0x7F && r < 0xA0) || r > 0xFF:
			b.WriteByte('?')
			replaced++
		default:
			b.WriteByte(byte(r))
		}
	}
	return b.String(), replaced
}
