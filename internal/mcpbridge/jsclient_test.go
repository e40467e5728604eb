package mcpbridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/mcpbridge"
)

// jsClientDir holds the Node.js client on @modelcontextprotocol/sdk.
const jsClientDir = "testdata/jsclient"

// jsCall is one tool call as the Node.js client reports it.
type jsCall struct {
	Name       string         `json:"name"`
	IsError    bool           `json:"isError"`
	Texts      []string       `json:"texts"`
	Structured map[string]any `json:"structured"`
}

func (c jsCall) text() string { return strings.Join(c.Texts, "\n") }

type jsReport struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Tools []struct {
		Name        string         `json:"name"`
		Annotations map[string]any `json:"annotations"`
		Required    []string       `json:"required"`
	} `json:"tools"`
	Calls []jsCall `json:"calls"`
}

type jsPlan struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env"`
	Calls   []map[string]any  `json:"calls"`
}

// jsClient returns the node binary, installing the client's packages with
// npm ci when they are missing; it skips the test when Node.js or the
// packages cannot be had.
func jsClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the real-client test needs Node.js 18 or later to run @modelcontextprotocol/sdk")
	}
	if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return node
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("%s/node_modules is missing and npm is not installed: run npm ci in %s to enable this test", jsClientDir, jsClientDir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = jsClientDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm ci in %s failed (%v), so the real-client test cannot run:\n%s", jsClientDir, err, out)
	}
	return node
}

// buildBridges builds svc-mcp and svc-mcp-offline into a temporary folder.
func buildBridges(t *testing.T) (online, offline string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"github.com/svcrun/svc/cmd/svc-mcp", "github.com/svcrun/svc/cmd/svc-mcp-offline")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "svc-mcp"), filepath.Join(dir, "svc-mcp-offline")
}

// runJS runs the Node.js client on a plan.
func runJS(t *testing.T, node string, plan jsPlan) jsReport {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", string(b))
	cmd.Dir = jsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
	}
	var rep jsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client output %q: %v\nstderr: %s", stdout.Bytes(), err, stderr.Bytes())
	}
	if len(rep.Calls) != len(plan.Calls) {
		t.Fatalf("client made %d calls; want %d", len(rep.Calls), len(plan.Calls))
	}
	return rep
}

// TestRealClient drives the built binaries with the official TypeScript
// MCP SDK (a client nobody here wrote) over real stdio pipes: the tool
// list and its order, offline validation and saving, and online saving,
// running and reading against a running server.
func TestRealClient(t *testing.T) {
	t.Parallel()
	node := jsClient(t)
	svcMCP, svcOffline := buildBridges(t)
	outDir := t.TempDir()
	good := doc("hello", `{"greeting": "hi"}`)

	t.Run("offline", func(t *testing.T) {
		t.Parallel()
		rep := runJS(t, node, jsPlan{Command: svcOffline, Env: map[string]string{"SVC_OUT_DIR": outDir}, Calls: []map[string]any{
			{"name": "validate_workflow", "arguments": map[string]any{"workflow": good}},
			{"name": "validate_workflow", "arguments": map[string]any{"workflow": `{"id": "x", "nodes": [}`}},
			{"name": "validate_workflow", "arguments": map[string]any{}},
			{"name": "save_workflow", "arguments": map[string]any{"workflow": good}},
			{"name": "save_workflow", "arguments": map[string]any{"workflow": good}},
			{"name": "run_workflow", "arguments": map[string]any{"id": "hello"}},
			{"name": "list_nodes"},
		}})
		if rep.Server.Name != "svc-mcp-offline" {
			t.Errorf("server name %q", rep.Server.Name)
		}
		var names []string
		for _, tool := range rep.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, mcpbridge.ToolNames) {
			t.Errorf("tools/list = %v; want %v", names, mcpbridge.ToolNames)
		}
		c := rep.Calls
		if c[0].IsError || c[0].Structured["valid"] != true {
			t.Errorf("validate good = %+v", c[0])
		}
		if c[1].IsError || c[1].Structured["valid"] != false || !strings.Contains(c[1].text(), `"parse"`) {
			t.Errorf("validate malformed = %+v; want parse findings", c[1])
		}
		if !c[2].IsError || c[2].text() != "failed to deserialize parameters: missing field workflow" {
			t.Errorf("validate without workflow = %+v", c[2])
		}
		path := filepath.Join(outDir, "hello.svc")
		if c[3].IsError || c[3].Structured["path"] != path {
			t.Errorf("save = %+v; want %s", c[3], path)
		}
		if _, err := os.Stat(path); err != nil {
			t.Error(err)
		}
		if !c[4].IsError || !strings.HasPrefix(c[4].text(), "Not written: "+path+" already exists; pass overwrite=true") {
			t.Errorf("second save = %+v", c[4])
		}
		if !c[5].IsError || !strings.HasPrefix(c[5].text(), "This tool needs online mode") {
			t.Errorf("run offline = %+v", c[5])
		}
		if c[6].IsError || c[6].Structured["count"] == nil {
			t.Errorf("list_nodes = %+v", c[6])
		}
	})

	t.Run("online", func(t *testing.T) {
		t.Parallel()
		url := newServer(t)
		rep := runJS(t, node, jsPlan{Command: svcMCP, Args: []string{"--allow-write"},
			Env: map[string]string{"SVC_URL": url, "SVC_TOKEN": writeToken}, Calls: []map[string]any{
				{"name": "save_workflow", "arguments": map[string]any{"workflow": good}},
				{"name": "run_workflow", "arguments": map[string]any{"id": "hello", "wait_secs": 30}},
				{"name": "get_workflow", "arguments": map[string]any{"id": "hello"}},
				{"name": "list_workflows", "arguments": map[string]any{}},
				{"name": "get_workflow", "arguments": map[string]any{"id": "nope"}},
				{"name": "validate_workflow", "arguments": map[string]any{"workflow": good}},
			}})
		var names []string
		for _, tool := range rep.Tools {
			names = append(names, tool.Name)
			if tool.Name == "run_workflow" && (tool.Annotations["destructiveHint"] != true || tool.Annotations["openWorldHint"] != true) {
				t.Errorf("run_workflow annotations %v", tool.Annotations)
			}
			if tool.Name == "list_workflows" && tool.Annotations["readOnlyHint"] != true {
				t.Errorf("list_workflows annotations %v", tool.Annotations)
			}
		}
		if !slices.Equal(names, mcpbridge.ToolNames) {
			t.Errorf("tools/list = %v; want %v", names, mcpbridge.ToolNames)
		}
		c := rep.Calls
		if c[0].IsError || c[0].Structured["row_version"] != 1.0 {
			t.Fatalf("save = %+v", c[0])
		}
		if c[1].IsError || c[1].Structured["success"] != true || !strings.Contains(c[1].text(), "not as instructions") {
			t.Errorf("run = %+v", c[1])
		}
		if data, _ := json.Marshal(c[1].Structured["data"]); !strings.Contains(string(data), `"greeting":"hi"`) {
			t.Errorf("run data %s lacks the output", data)
		}
		if w, _ := c[2].Structured["workflow"].(map[string]any); c[2].IsError || w["id"] != "hello" || c[2].Structured["row_version"] != 1.0 {
			t.Errorf("get_workflow = %+v", c[2])
		}
		if c[3].IsError || c[3].Structured["total"] != 1.0 {
			t.Errorf("list_workflows = %+v", c[3])
		}
		if !c[4].IsError || !strings.HasPrefix(c[4].text(), "404 Not found: ") {
			t.Errorf("get_workflow of a missing id = %+v", c[4])
		}
		if c[5].IsError || c[5].Structured["valid"] != true {
			t.Errorf("validate online = %+v", c[5])
		}
	})

	t.Run("startup error", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command(svcMCP)
		cmd.Env = append(os.Environ(), "SVC_URL=http://127.0.0.1:7700", "SVC_TOKEN=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "SVC_TOKEN is not") {
			t.Errorf("svc-mcp with SVC_URL and no token: %v, stdout %q, stderr %q; want exit 2 and nothing on stdout", err, stdout.Bytes(), stderr.Bytes())
		}
	})
}
