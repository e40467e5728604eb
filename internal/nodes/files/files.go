// Package files holds the nodes that make and gather files: Text to File
// and Collect Files. A file travels between nodes as an object with name,
// mime_type, data (base64) and size, inside a media payload
// {files, count, source}.
package files

import (
	"encoding/base64"

	"github.com/svcrun/svc/internal/node"
)

// fileSchema is the JSON Schema of one file object.
var fileSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":      node.T("string"),
		"mime_type": node.T("string"),
		"data":      node.T("string", "the file's bytes, standard base64 (may be a data URI)"),
		"size":      node.T("integer", "bytes"),
	},
}

// filesSchema is the JSON Schema of a files array.
var filesSchema = map[string]any{"type": "array", "items": fileSchema}

// fileObject is a file as it travels between nodes.
func fileObject(name, mime string, data []byte) map[string]any {
	return map[string]any{
		"name":      name,
		"mime_type": mime,
		"data":      base64.StdEncoding.EncodeToString(data),
		"size":      len(data),
	}
}
