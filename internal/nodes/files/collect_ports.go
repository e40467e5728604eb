package files

import (
	"strconv"
	"strings"

	"github.com/svcrun/svc/internal/node"
)

// sourcesField is Collect Files' list of sources. PortsFor reads a raw
// config through it too, so ports and runs see the same names.
// Expressions are refused in it: ports must be known before a run.
var sourcesField = node.Field{Name: "sources", Kind: node.KindList, NoExpressions: true,
	Description: "names of the sources (an array, or comma-separated text); each becomes an input port"}

// collectPorts computes Collect Files' ports from a raw config: one input
// per configured source, or the generic In when there is none or the
// config cannot be read.
func collectPorts(raw map[string]any) (inputs, outputs []node.Port) {
	outputs = []node.Port{node.OutPort}
	var v any
	if raw != nil {
		v = raw[sourcesField.Name]
	}
	names, ok := readSources(v)
	if !ok || len(names) == 0 {
		return []node.Port{node.InPort}, outputs
	}
	return sourcePorts(names), outputs
}

// readSources decodes a raw sources value as the engine decodes the field.
func readSources(v any) ([]string, bool) {
	s := node.Spec{TypeID: "collect_files", Fields: []node.Field{sourcesField}}
	c, err := s.Decode(map[string]any{sourcesField.Name: v})
	if err != nil {
		return nil, false
	}
	return c.List(sourcesField.Name), true
}

// sourcePorts makes one input port per source name: the id is the name in
// snake_case (source_<n> when nothing is left; _2, _3 and so on after a
// duplicate id), the label the name.
func sourcePorts(names []string) []node.Port {
	ports := make([]node.Port, 0, len(names))
	taken := map[string]bool{}
	for i, name := range names {
		base := snakeCase(name)
		if base == "" {
			base = "source_" + strconv.Itoa(i+1)
		}
		id := base
		for n := 2; taken[id]; n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		taken[id] = true
		ports = append(ports, node.Port{ID: id, Label: name})
	}
	return ports
}

// snakeCase lower-cases s and turns each run of characters other than
// ASCII letters and digits into one "_", trimmed at both ends.
func snakeCase(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
			continue
		}
		sep = true
	}
	return b.String()
}
