package files

import (
	"context"
	"log/slog"
	"path"
	"strings"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(TextToFileSpec()) }

// CodeInvalidFormat is the error code of an unknown Text to File format.
const CodeInvalidFormat = "INVALID_FORMAT"

// format is one file format Text to File writes.
type format struct {
	mime string
	// render turns the content into the file's bytes; log takes notes
	// such as characters a format cannot hold.
	render func(content any, log *slog.Logger) ([]byte, error)
}

// formats are the formats by name; the name is also the extension.
var formats = map[string]format{
	"txt":  {"text/plain", renderText},
	"md":   {"text/markdown", renderText},
	"html": {"text/html", renderText},
	"csv":  {"text/csv", renderCSV},
	"json": {"application/json", renderJSON},
	"pdf":  {"application/pdf", renderPDF},
	"docx": {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", renderDOCX},
}

// formatNames lists the formats in display order.
var formatNames = []string{"txt", "md", "html", "csv", "json", "pdf", "docx"}

// TextToFileSpec is the Text to File node: it writes text (or any value) as
// a file of a chosen format and outputs it as a media payload.
func TextToFileSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "text_to_file",
		DisplayName: "Text to File",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Writes text as a file (plain text, Markdown, HTML, CSV, JSON, PDF or Word) for later nodes.",
		Fields: []node.Field{
			{Name: "filename", Kind: node.KindText, Default: "output",
				Description: "file name; directories are dropped and the format's extension is added when missing"},
			{Name: "format", Kind: node.KindEnum, Enum: formatNames, FoldCase: true, Default: "txt", Code: CodeInvalidFormat,
				Description: "txt, md, html, csv, json, pdf or docx"},
			{Name: "mime_type", Kind: node.KindText, Description: "blank follows the format"},
			{Name: "content", Kind: node.KindAny,
				Description: "text or any JSON value to write; blank writes the node's input"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output: node.Object(map[string]any{
			"files":     filesSchema,
			"count":     node.T("integer"),
			"source":    node.T("string"),
			"filename":  node.T("string"),
			"mime_type": node.T("string"),
			"bytes":     node.T("integer", "size of the file"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &TextToFile{
				Filename: c.String("filename"),
				Format:   c.String("format"),
				MimeType: c.String("mime_type"),
				Content:  c.Value("content"),
			}, nil
		},
	}
}

// TextToFile is a configured Text to File node.
type TextToFile struct {
	// Filename is cut to its base name and given the format's extension.
	Filename string
	// Format is one of txt, md, html, csv, json, pdf, docx.
	Format string
	// MimeType overrides the format's media type when not blank.
	MimeType string
	// Content is what to write; nil (or blank text) writes the input.
	Content any
}

// Run renders the content and outputs the file.
func (t *TextToFile) Run(_ context.Context, env node.Env) (node.Result, error) {
	f, ok := formats[t.Format]
	if !ok {
		return node.Result{}, node.FieldError(CodeInvalidFormat, "format", "unknown format %q", t.Format)
	}
	content := t.Content
	if value.Blank(content) {
		content = env.Input()
	}
	data, err := f.render(content, env.Logger())
	if err != nil {
		return node.Result{}, node.Errorf(node.CodeInternal, "writing %s: %w", t.Format, err)
	}
	name := fileName(t.Filename, t.Format)
	mime := strings.TrimSpace(t.MimeType)
	if mime == "" {
		mime = f.mime
	}
	return node.Result{Output: map[string]any{
		"files":     []any{fileObject(name, mime, data)},
		"count":     1,
		"source":    "text_to_file",
		"filename":  name,
		"mime_type": mime,
		"bytes":     len(data),
	}}, nil
}

// fileName keeps the base name of name (with / or \ as separator), uses
// "output" when nothing is left, and adds the extension ext when the name
// does not already end with it in any letter case.
func fileName(name, ext string) string {
	name = strings.ReplaceAll(strings.TrimSpace(name), `\`, "/")
	name = strings.TrimSpace(path.Base(name))
	if name == "" || name == "." || name == ".." || name == "/" {
		name = "output"
	}
	if !strings.HasSuffix(strings.ToLower(name), "."+ext) {
		name += "." + ext
	}
	return name
}
