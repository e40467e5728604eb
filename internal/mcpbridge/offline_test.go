package mcpbridge_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svcrun/svc/internal/mcpbridge"
	"github.com/svcrun/svc/internal/node"
)

// TestToolOrder checks tools/list in both modes and both builds: the 11
// tools in the spec's order (the SDK sorts by name), their annotations,
// and the required arguments of their input schemas.
func TestToolOrder(t *testing.T) {
	t.Parallel()
	url, _ := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {})
	want := []string{"delete_workflow", "get_node_schema", "get_scheduler_status", "get_workflow", "list_nodes",
		"list_workflows", "run_workflow", "save_workflow", "start_schedule", "stop_schedule", "validate_workflow"}
	if !slices.Equal(mcpbridge.ToolNames, want) {
		t.Fatalf("ToolNames = %v; want %v", mcpbridge.ToolNames, want)
	}
	required := map[string][]string{
		"delete_workflow": {"id"}, "get_node_schema": {"type_id"}, "get_workflow": {"id"}, "run_workflow": {"id"},
		"save_workflow": {"workflow"}, "start_schedule": {"id"}, "stop_schedule": {"id"}, "validate_workflow": {"workflow"},
	}
	readOnly := []string{"get_node_schema", "get_scheduler_status", "get_workflow", "list_nodes", "list_workflows", "validate_workflow"}
	for name, opts := range map[string]mcpbridge.Options{
		"offline":         {},
		"offline-only":    {Program: "svc-mcp-offline", OfflineOnly: true},
		"online":          {URL: url, Token: writeToken},
		"online-writable": {URL: url, Token: writeToken, AllowWrite: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cs := connect(t, opts)
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range res.Tools {
				got = append(got, tool.Name)
				a := tool.Annotations
				if a == nil {
					t.Fatalf("%s has no annotations", tool.Name)
				}
				switch {
				case slices.Contains(readOnly, tool.Name):
					if !a.ReadOnlyHint {
						t.Errorf("%s: readOnlyHint false; want true", tool.Name)
					}
				case tool.Name == "run_workflow":
					if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.OpenWorldHint == nil || !*a.OpenWorldHint {
						t.Errorf("run_workflow annotations %+v; want destructive and open-world", a)
					}
				default:
					if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
						t.Errorf("%s annotations %+v; want destructive", tool.Name, a)
					}
				}
				s, _ := tool.InputSchema.(map[string]any)
				if s["type"] != "object" {
					t.Errorf("%s input schema type %v; want object", tool.Name, s["type"])
				}
				var req []string
				if r, ok := s["required"].([]any); ok {
					for _, v := range r {
						req = append(req, v.(string))
					}
				}
				if !slices.Equal(req, required[tool.Name]) {
					t.Errorf("%s required = %v; want %v", tool.Name, req, required[tool.Name])
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("tools/list = %v; want %v", got, want)
			}
		})
	}
}

func TestOfflineCatalog(t *testing.T) {
	t.Parallel()
	cs := connect(t, mcpbridge.Options{})
	reg := node.Default()

	list := ok(t, cs, "list_nodes", nil)
	nodes := list["nodes"].([]any)
	if len(nodes) != reg.Len() || num(list["count"]) != int64(reg.Len()) {
		t.Fatalf("list_nodes has %d nodes (count %v); want %d", len(nodes), list["count"], reg.Len())
	}
	for i, n := range nodes {
		e := n.(map[string]any)
		s := reg.Specs()[i]
		if e["id"] != s.TypeID || e["name"] != s.DisplayName || e["category"] != string(s.Category) || e["enabled"] != s.Enabled {
			t.Errorf("list_nodes[%d] = %v; want %s %q %s enabled=%v", i, e, s.TypeID, s.DisplayName, s.Category, s.Enabled)
		}
		if d, _ := e["description"].(string); strings.Contains(d, "\n") || len([]rune(d)) > 200 {
			t.Errorf("list_nodes[%d] description %q is not one short line", i, d)
		}
	}

	schema := ok(t, cs, "get_node_schema", map[string]any{"type_id": "manual_trigger"})
	cfg, _ := schema["config_schema"].(map[string]any)
	if _, ok := cfg["properties"].(map[string]any)["mock_payload"]; !ok {
		t.Errorf("manual_trigger config_schema = %v; want the mock_payload field", cfg)
	}
	ports, _ := schema["ports"].(map[string]any)
	if outs, _ := ports["outputs"].([]any); len(outs) == 0 || schema["output_schema"] == nil || schema["trigger_capable"] != true {
		t.Errorf("manual_trigger schema = %v; want output ports, an output schema and trigger_capable", schema)
	}
	if got := ok(t, cs, "get_node_schema", map[string]any{"type_id": "Manual_Trigger"}); got["type_id"] != "manual_trigger" {
		t.Errorf("get_node_schema ignoring case = %v", got["type_id"])
	}
	msg := fails(t, cs, "get_node_schema", map[string]any{"type_id": "trigger"}, `Unknown node type "trigger": list_nodes shows the type ids.`)
	if !strings.Contains(msg, "manual_trigger") {
		t.Errorf("unknown type message %q suggests no near match", msg)
	}
}

func TestOfflineValidate(t *testing.T) {
	t.Parallel()
	cs := connect(t, mcpbridge.Options{})
	good := doc("good", `{"n": 1}`)
	goodJSON, _ := json.Marshal(good)
	for _, tc := range []struct {
		name     string
		workflow any
		valid    bool
		check    string // a check with an error finding
	}{
		{"object", good, true, ""},
		{"string", string(goodJSON), true, ""},
		{"malformed JSON", `{"id": "x", "nodes": [`, false, "parse"},
		{"not a workflow", map[string]any{"nodes": "many"}, false, "parse"},
		{"unknown type", map[string]any{"id": "x", "name": "X", "nodes": []any{
			map[string]any{"id": "a", "node_type_id": "no_such_type"}}, "edges": []any{}}, false, "node_types"},
		{"missing node", map[string]any{"id": "x", "name": "X", "nodes": []any{
			map[string]any{"id": "t", "node_type_id": "manual_trigger"}},
			"edges": []any{map[string]any{"id": "e", "from": "t", "to": "gone"}}}, false, "graph"},
	} {
		rep := ok(t, cs, "validate_workflow", map[string]any{"workflow": tc.workflow})
		if rep["valid"] != tc.valid {
			t.Errorf("%s: valid = %v; want %v (%v)", tc.name, rep["valid"], tc.valid, rep)
		}
		if tc.check != "" {
			errs, _ := rep["errors"].([]any)
			if !slices.ContainsFunc(errs, func(e any) bool { return e.(map[string]any)["check"] == tc.check }) {
				t.Errorf("%s: errors %v; want a %s finding", tc.name, errs, tc.check)
			}
		}
	}
}

// TestOnlineToolsOffline checks that the server tools stay listed offline
// and say how to enable them, in both builds.
func TestOnlineToolsOffline(t *testing.T) {
	t.Parallel()
	args := map[string]map[string]any{
		"delete_workflow": {"id": "x"}, "get_scheduler_status": {}, "get_workflow": {"id": "x"}, "list_workflows": {},
		"run_workflow": {"id": "x"}, "start_schedule": {"id": "x"}, "stop_schedule": {"id": "x"},
	}
	for _, tc := range []struct {
		opts mcpbridge.Options
		hint string
	}{
		{mcpbridge.Options{}, "SVC_URL"},
		{mcpbridge.Options{Program: "svc-mcp-offline", OfflineOnly: true}, "Use svc-mcp with SVC_URL"},
	} {
		cs := connect(t, tc.opts)
		for tool, a := range args {
			msg := fails(t, cs, tool, a, "This tool needs online mode")
			if !strings.Contains(msg, tc.hint) {
				t.Errorf("%s offline (%s): %q does not say %q", tool, tc.opts.Program, msg, tc.hint)
			}
		}
	}
}

func TestOfflineSave(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out") // created by the first save
	cs := connect(t, mcpbridge.Options{OutDir: dir})
	w := doc("daily/report", `{"n": 1}`)

	res := ok(t, cs, "save_workflow", map[string]any{"workflow": w})
	path := filepath.Join(dir, "daily_report.svc")
	if res["path"] != path || res["id"] != "daily/report" || res["replaced"] != false {
		t.Errorf("save = %v; want path %s", res, path)
	}
	if v, _ := res["validation"].(map[string]any); v["valid"] != true {
		t.Errorf("save validation = %v; want valid", v)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(written, &back); err != nil || back["id"] != "daily/report" || !strings.HasSuffix(string(written), "}\n") {
		t.Errorf("file %s = %q (%v); want the indented document", path, written, err)
	}

	// Never overwrites unless asked.
	w2 := doc("daily/report", `{"n": 2}`)
	fails(t, cs, "save_workflow", map[string]any{"workflow": w2},
		"Not written: "+path+" already exists; pass overwrite=true to replace it.")
	if again, _ := os.ReadFile(path); string(again) != string(written) {
		t.Errorf("a refused save changed the file")
	}
	res = ok(t, cs, "save_workflow", map[string]any{"workflow": w2, "overwrite": true})
	if res["replaced"] != true {
		t.Errorf("overwrite save = %v; want replaced", res)
	}
	if again, _ := os.ReadFile(path); !strings.Contains(string(again), `"n": 2`) {
		t.Errorf("overwrite left %q", again)
	}
	// A string holding the document; a Windows device name.
	s, _ := json.Marshal(doc("con", `{}`))
	if res := ok(t, cs, "save_workflow", map[string]any{"workflow": string(s)}); res["path"] != filepath.Join(dir, "_con.svc") {
		t.Errorf("save of id con wrote %v; want _con.svc", res["path"])
	}
	// A workflow that does not parse is not written and says why.
	fails(t, cs, "save_workflow", map[string]any{"workflow": map[string]any{"name": "no id"}}, "Not written: the workflow does not parse")
	fails(t, cs, "save_workflow", map[string]any{"workflow": "{broken"}, "Not written: the workflow does not parse")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("output folder holds %d files; want 2 (no temporary files left)", len(entries))
	}
}

// TestOfflineSaveDefaultDir checks the default output folder
// (~/svc-workflows) and SVC_OUT_DIR, read by Main's configuration.
func TestOfflineSaveDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	cs := connect(t, mcpbridge.Options{})
	res := ok(t, cs, "save_workflow", map[string]any{"workflow": doc("w1", `{}`)})
	if want := filepath.Join(home, "svc-workflows", "w1.svc"); res["path"] != want {
		t.Errorf("default path %v; want %s", res["path"], want)
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, want string }{
		{"daily-report", "daily-report.svc"},
		{"a/b\\c:d", "a_b_c_d.svc"},
		{"../../etc/passwd", ".._.._etc_passwd.svc"},
		{"héllo wörld", "h_llo_w_rld.svc"},
		{"v1.2_x", "v1.2_x.svc"},
		{"CON", "_CON.svc"},
		{"con", "_con.svc"},
		{"Aux.backup", "_Aux.backup.svc"},
		{"nul.txt", "_nul.txt.svc"},
		{"PRN", "_PRN.svc"},
		{"com1", "_com1.svc"},
		{"LPT9", "_LPT9.svc"},
		{"COM0", "COM0.svc"},
		{"COM10", "COM10.svc"},
		{"console", "console.svc"},
		{"xcon", "xcon.svc"},
	} {
		if got := mcpbridge.FileName(tc.id); got != tc.want {
			t.Errorf("FileName(%q) = %q; want %q", tc.id, got, tc.want)
		}
	}
	long := strings.Repeat("é", 256)
	a, b := mcpbridge.FileName(long), mcpbridge.FileName(long[:len(long)-2]+"x")
	if len(a) > 255 || !strings.HasSuffix(a, ".svc") || a == b {
		t.Errorf("FileName of long ids = %q, %q; want distinct names of at most 255 bytes", a, b)
	}
}

// TestMissingArguments checks the argument errors of every tool with a
// required argument, offline and online (no request is sent).
func TestMissingArguments(t *testing.T) {
	t.Parallel()
	url, n := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {})
	offline := connect(t, mcpbridge.Options{})
	online := connect(t, mcpbridge.Options{URL: url, Token: writeToken, AllowWrite: true})
	for _, tc := range []struct {
		cs    *mcp.ClientSession
		tool  string
		field string
	}{
		{offline, "get_node_schema", "type_id"},
		{offline, "validate_workflow", "workflow"},
		{offline, "save_workflow", "workflow"},
		{online, "get_node_schema", "type_id"},
		{online, "validate_workflow", "workflow"},
		{online, "save_workflow", "workflow"},
		{online, "get_workflow", "id"},
		{online, "delete_workflow", "id"},
		{online, "run_workflow", "id"},
		{online, "start_schedule", "id"},
		{online, "stop_schedule", "id"},
	} {
		fails(t, tc.cs, tc.tool, map[string]any{}, "failed to deserialize parameters: missing field "+tc.field)
		fails(t, tc.cs, tc.tool, nil, "failed to deserialize parameters: missing field "+tc.field)
		fails(t, tc.cs, tc.tool, map[string]any{tc.field: nil}, "failed to deserialize parameters: missing field "+tc.field)
	}
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"run_workflow", map[string]any{"id": "x", "wait_sec": 5}, "failed to deserialize parameters: unknown field wait_sec, expected one of id, wait_secs, initial_variables"},
		{"run_workflow", map[string]any{"id": 7}, "failed to deserialize parameters: invalid type for field id: expected a string"},
		{"run_workflow", map[string]any{"id": ""}, "failed to deserialize parameters: invalid value for field id: must not be empty"},
		{"run_workflow", map[string]any{"id": "x", "wait_secs": 0}, "failed to deserialize parameters: invalid value for field wait_secs: 0 is below the minimum 1"},
		{"run_workflow", map[string]any{"id": "x", "wait_secs": 1.5}, "failed to deserialize parameters: invalid type for field wait_secs: expected an integer"},
		{"run_workflow", map[string]any{"id": "x", "initial_variables": []any{}}, "failed to deserialize parameters: invalid type for field initial_variables: expected an object"},
		{"list_workflows", map[string]any{"offset": -1}, "failed to deserialize parameters: invalid value for field offset: -1 is below the minimum 0"},
		{"start_schedule", map[string]any{"id": "x", "port_override": 70000}, "failed to deserialize parameters: invalid value for field port_override: 70000 is above the maximum 65535"},
		{"save_workflow", map[string]any{"workflow": 5}, "failed to deserialize parameters: invalid type for field workflow: expected a workflow document"},
		{"save_workflow", map[string]any{"workflow": map[string]any{}, "overwrite": "maybe"}, "failed to deserialize parameters: invalid type for field overwrite: expected a boolean"},
		{"list_nodes", map[string]any{"x": 1}, "failed to deserialize parameters: unknown field x, this tool takes no arguments"},
		{"list_nodes", json.RawMessage(`[1]`), "failed to deserialize parameters: invalid type: expected an object of named arguments"},
	} {
		fails(t, online, tc.tool, tc.args, tc.want)
	}
	if got := n.Load(); got != 0 {
		t.Errorf("argument errors sent %d requests; want none", got)
	}
}
