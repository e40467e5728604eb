package mcpbridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/workflow"
)

// descriptor is the part of a catalog entry (GET /api/nodes, or
// node.Spec.Descriptor offline) that list_nodes shows.
type descriptor struct {
	TypeID      string `json:"type_id"`
	DisplayName string `json:"display_name"`
	NodeType    string `json:"node_type"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
}

// nodeEntry is one line of list_nodes.
type nodeEntry struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Category    string `json:"category"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
}

func (d descriptor) entry() nodeEntry {
	return nodeEntry{ID: d.TypeID, Name: d.DisplayName, Category: d.NodeType, Description: oneLine(d.Description), Enabled: d.Enabled}
}

// oneLine is the first line of a description, at most 200 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:199]) + "…"
	}
	return s
}

// descriptors are the offline catalog's entries as decoded JSON.
func (b *Bridge) descriptors() ([]map[string]any, error) {
	specs := b.reg.Specs()
	out := make([]map[string]any, 0, len(specs))
	for _, s := range specs {
		v, err := normalize(s.Descriptor())
		if err != nil {
			return nil, err
		}
		out = append(out, v.(map[string]any))
	}
	return out, nil
}

func offlineListNodes(_ context.Context, b *Bridge, _ args) (reply, error) {
	specs := b.reg.Specs()
	nodes := make([]nodeEntry, 0, len(specs))
	for _, s := range specs {
		d := s.Descriptor()
		nodes = append(nodes, descriptor{TypeID: d.TypeID, DisplayName: d.DisplayName, NodeType: string(d.NodeType),
			Description: d.Description, Enabled: d.Enabled}.entry())
	}
	return reply{value: map[string]any{
		"engine_version": engine.Version, "count": len(nodes), "nodes": nodes,
		"note": "Offline catalog: the built-in node types of this bridge. A server may add plugin types, and enables " +
			"shell_command, code and database only when started with the matching --allow-* flag.",
	}}, nil
}

func offlineNodeSchema(_ context.Context, b *Bridge, a args) (reply, error) {
	all, err := b.descriptors()
	if err != nil {
		return reply{}, err
	}
	return nodeSchema(all, a.str("type_id"))
}

// nodeSchema finds a type in a catalog (exact id first, then ignoring
// case) and returns its schemas and ports.
func nodeSchema(all []map[string]any, typeID string) (reply, error) {
	find := func(eq func(a, b string) bool) map[string]any {
		for _, d := range all {
			if id, _ := d["type_id"].(string); eq(id, typeID) {
				return d
			}
		}
		return nil
	}
	d := find(func(a, b string) bool { return a == b })
	if d == nil {
		d = find(strings.EqualFold)
	}
	if d == nil {
		var near []string
		for _, d := range all {
			id, _ := d["type_id"].(string)
			name, _ := d["display_name"].(string)
			q := strings.ToLower(strings.TrimSpace(typeID))
			if q != "" && (strings.Contains(id, q) || strings.Contains(q, id) || strings.Contains(strings.ToLower(name), q)) {
				near = append(near, id)
			}
		}
		msg := fmt.Sprintf("Unknown node type %q: list_nodes shows the type ids.", typeID)
		if len(near) > 0 {
			msg += " Did you mean: " + strings.Join(near[:min(len(near), 5)], ", ") + "?"
		}
		return reply{}, errors.New(msg)
	}
	out := map[string]any{}
	for _, k := range []string{"type_id", "display_name", "version", "description", "enabled", "trigger_capable",
		"is_plugin", "dynamic_ports", "ports", "output_schema"} {
		if v, ok := d[k]; ok {
			out[k] = v
		}
	}
	out["category"] = d["node_type"]
	out["config_schema"] = d["input_schema"]
	return reply{value: out}, nil
}

func offlineValidate(_ context.Context, b *Bridge, a args) (reply, error) {
	return reply{value: workflow.Validate(a.doc("workflow"), b.reg)}, nil
}

// DefaultOutDir is the folder offline save_workflow writes to when neither
// --out-dir nor SVC_OUT_DIR is set: svc-workflows in the home folder.
func DefaultOutDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder to put svc-workflows in (%v): set --out-dir or SVC_OUT_DIR", err)
	}
	return filepath.Join(home, "svc-workflows"), nil
}

// offlineSave writes the document, indented, to <safe id>.svc in the
// output folder. It never replaces a file unless overwrite is true, and
// then replaces it whole (write to a temporary file, then rename).
func offlineSave(_ context.Context, b *Bridge, a args) (reply, error) {
	doc := a.doc("workflow")
	w, err := workflow.Parse(doc)
	if err != nil {
		return reply{}, fmt.Errorf("Not written: the workflow does not parse: %v. validate_workflow lists what to fix.", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.TrimSpace(doc), "", "  "); err != nil {
		return reply{}, fmt.Errorf("Not written: the workflow is not JSON: %v", err)
	}
	pretty.WriteByte('\n')
	dir := b.opts.OutDir
	if dir == "" {
		if dir, err = DefaultOutDir(); err != nil {
			return reply{}, fmt.Errorf("Not written: %v", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return reply{}, fmt.Errorf("Not written: cannot create the output folder: %v", err)
	}
	path := filepath.Join(dir, FileName(w.ID))
	overwrite := a.flag("overwrite")
	replaced, err := writeFile(path, pretty.Bytes(), overwrite)
	if errors.Is(err, fs.ErrExist) {
		return reply{}, fmt.Errorf("Not written: %s already exists; pass overwrite=true to replace it.", path)
	}
	if err != nil {
		return reply{}, fmt.Errorf("Not written: %v", err)
	}
	rep := workflow.Validate(doc, b.reg)
	out := map[string]any{"ok": true, "id": w.ID, "path": path, "bytes": pretty.Len(), "replaced": replaced, "validation": rep}
	if a.has("if_match_row_version") {
		out["note"] = "if_match_row_version applies to online mode only and was ignored."
	}
	return reply{value: out}, nil
}

// writeFile writes data to path: with overwrite, through a temporary file
// renamed over it (reporting whether a file was there); without, only if
// nothing is there (fs.ErrExist otherwise).
func writeFile(path string, data []byte, overwrite bool) (replaced bool, err error) {
	if !overwrite {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return false, err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
		return false, err
	}
	_, statErr := os.Lstat(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".svc-mcp-*.tmp")
	if err != nil {
		return false, err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return false, err
	}
	return statErr == nil, nil
}

// FileName is the file offline save_workflow writes for a workflow id:
// every character outside [A-Za-z0-9._-] becomes _, a name Windows keeps
// for a device (CON, PRN, AUX, NUL, COM1-9, LPT1-9, in any case, also
// before an extension) gets a leading _, and a name too long for common
// file systems is cut and told apart by a hash of the id. The extension is
// .svc.
func FileName(id string) string {
	var sb strings.Builder
	for _, r := range id {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	name := sb.String()
	if len(name) > maxBaseName {
		sum := sha256.Sum256([]byte(id))
		name = name[:maxBaseName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	stem, _, _ := strings.Cut(name, ".")
	if windowsDevice(stem) {
		name = "_" + name
	}
	return name + ".svc"
}

// maxBaseName keeps <name>.svc within the 255 bytes most file systems
// allow, with room to spare.
const maxBaseName = 200

func windowsDevice(stem string) bool {
	s := strings.ToUpper(stem)
	if slices.Contains([]string{"CON", "PRN", "AUX", "NUL"}, s) {
		return true
	}
	return len(s) == 4 && (strings.HasPrefix(s, "COM") || strings.HasPrefix(s, "LPT")) && s[3] >= '1' && s[3] <= '9'
}
