package files

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(CollectFilesSpec()) }

// Collect Files error codes.
const (
	// CodeInvalidSource: a source's text looks like JSON but is not.
	CodeInvalidSource = "INVALID_SOURCE"
	// CodeInvalidFileEntry: a file entry is not an object.
	CodeInvalidFileEntry = "INVALID_FILE_ENTRY"
	// CodeFilesTooLarge: the collected data exceeds MaxCollectedData.
	CodeFilesTooLarge = "FILES_TOO_LARGE"
)

// MaxCollectedData is the most base64 characters the data fields of the
// collected files may hold together.
const MaxCollectedData = 10 * 1024 * 1024

// CollectFilesSpec is the Collect Files node: it gathers the files of
// several sources into one media payload.
func CollectFilesSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "collect_files",
		DisplayName: "Collect Files",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Gathers the files of several sources into one list, renaming same-name files.",
		Fields:      []node.Field{sourcesField},
		Inputs:      []node.Port{node.InPort},
		Outputs:     []node.Port{node.OutPort},
		PortsFor:    collectPorts,
		Output: node.Object(map[string]any{
			"files":  filesSchema,
			"count":  node.T("integer"),
			"source": node.T("string"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return NewCollectFiles(c.List("sources")), nil
		},
	}
}

// CollectFiles is a configured Collect Files node.
type CollectFiles struct {
	// Ports are the input ports, one per source in source-number order.
	Ports []node.Port
}

// NewCollectFiles returns a Collect Files node with the given source names;
// with none it has the generic In.
func NewCollectFiles(sources []string) *CollectFiles {
	if len(sources) == 0 {
		return &CollectFiles{Ports: []node.Port{node.InPort}}
	}
	return &CollectFiles{Ports: sourcePorts(sources)}
}

// source is one input with its source number and a name for messages.
type source struct {
	num   int
	label string
	in    node.Input
}

// Run collects the files of every input, in source-number order. An input
// on a port the node does not declare comes after the declared ones.
func (c *CollectFiles) Run(_ context.Context, env node.Env) (node.Result, error) {
	srcs := c.sources(env.Inputs())
	files := []any{}
	taken := map[string]bool{}
	total := 0
	for _, s := range srcs {
		entries, err := s.entries()
		if err != nil {
			return node.Result{}, err
		}
		if entries == nil && s.in.Value != nil {
			env.Logger().Info("skipped a source that holds no files", "source_name", s.label, "port", s.in.Port, "from", s.in.From)
			continue
		}
		for i, e := range entries {
			entry, ok := e.(map[string]any)
			if !ok {
				return node.Result{}, node.Errorf(CodeInvalidFileEntry,
					"source %q: file entry %d is %s, not an object", s.label, i, value.TypeName(e))
			}
			f := maps.Clone(entry)
			f["name"] = uniqueName(entryName(entry), s.num, taken)
			if d, ok := f["data"].(string); ok {
				total += len(d)
			}
			if total > MaxCollectedData {
				return node.Result{}, node.Errorf(CodeFilesTooLarge,
					"the files' data exceed %d base64 characters", MaxCollectedData)
			}
			files = append(files, f)
		}
	}
	return node.Result{Output: map[string]any{"files": files, "count": len(files), "source": "collect_files"}}, nil
}

// sources numbers the inputs by their port and sorts them by number,
// keeping completion order within a number.
func (c *CollectFiles) sources(ins []node.Input) []source {
	out := make([]source, 0, len(ins))
	for _, in := range ins {
		s := source{num: len(c.Ports) + 1, label: in.Port, in: in}
		for i, p := range c.Ports {
			if p.ID == in.Port {
				s.num, s.label = i+1, p.Label
				break
			}
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b source) int { return cmp.Compare(a.num, b.num) })
	return out
}

// entries returns the file entries a source holds, or nil when it holds
// none: text that is not JSON, null, or a value without files.
func (s source) entries() ([]any, error) {
	v := s.in.Value
	if t, ok := v.(string); ok {
		t = strings.TrimSpace(t)
		if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
			return nil, nil
		}
		parsed, err := value.DecodeString(t)
		if err != nil {
			return nil, node.Errorf(CodeInvalidSource, "source %q: text is not valid JSON: %v", s.label, err)
		}
		v = parsed
	}
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		files, _ := t["files"].([]any)
		return files, nil
	}
	return nil, nil
}

// entryName is a file entry's name, else its filename, else file.bin.
func entryName(e map[string]any) string {
	for _, k := range []string{"name", "filename"} {
		if n := strings.TrimSpace(value.Text(e[k])); n != "" {
			return n
		}
	}
	return "file.bin"
}

// uniqueName returns name, or when a taken name equals it ignoring case
// <base>_<num><ext>, then <base>_<num>_2<ext>, _3 and so on; it marks the
// result taken.
func uniqueName(name string, num int, taken map[string]bool) string {
	out := name
	if taken[strings.ToLower(out)] {
		ext := path.Ext(name)
		base := strings.TrimSuffix(name, ext)
		if base == "" {
			base, ext = name, ""
		}
		stem := fmt.Sprintf("%s_%d", base, num)
		out = stem + ext
		for n := 2; taken[strings.ToLower(out)]; n++ {
			out = fmt.Sprintf("%s_%d%s", stem, n, ext)
		}
	}
	taken[strings.ToLower(out)] = true
	return out
}
