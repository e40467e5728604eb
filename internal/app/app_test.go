package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func call(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRun(t *testing.T) {
	t.Parallel()
	code, out, errs := call(t, "", "run", "--vars", `{"suffix":"!"}`, "testdata/hello.json")
	if code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errs)
	}
	var res struct {
		Success     bool
		NodeOutputs map[string]map[string]any `json:"node_outputs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if got := res.NodeOutputs["show"]["value"]; !res.Success || got != "hello world!" {
		t.Errorf("run printed %v; want the greeting", got)
	}
	code, out, _ = call(t, "", "run", "--payload", `{"name":"svc"}`, "testdata/hello.json")
	if code != 0 || !strings.Contains(out, "hello svc") {
		t.Errorf("run with payload: exit %d, %s", code, out)
	}
}

func TestRunFailureExitsOne(t *testing.T) {
	t.Parallel()
	doc := `{"id":"f","name":"F","nodes":[{"id":"j","node_type_id":"json","config":{"operation":"parse","input_text":"{"}}]}`
	code, out, _ := call(t, doc, "run", "-")
	if code != 1 || !strings.Contains(out, `"error_code": "INVALID_JSON"`) {
		t.Errorf("exit %d, %s; want 1 with INVALID_JSON", code, out)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	code, out, _ := call(t, "", "validate", "testdata/hello.json")
	if code != 0 || !strings.Contains(out, `"valid": true`) {
		t.Errorf("validate hello: exit %d, %s", code, out)
	}
	code, out, _ = call(t, `{"id":"x","name":"X","nodes":[{"id":"a","node_type_id":"nope"}]}`, "validate", "-")
	if code != 1 || !strings.Contains(out, `"check": "node_types"`) {
		t.Errorf("validate bad: exit %d, %s", code, out)
	}
}

func TestNodesCatalog(t *testing.T) {
	t.Parallel()
	code, out, _ := call(t, "", "nodes")
	var cat struct {
		EngineVersion string `json:"engine_version"`
		Nodes         []struct {
			TypeID string `json:"type_id"`
		}
	}
	if err := json.Unmarshal([]byte(out), &cat); code != 0 || err != nil {
		t.Fatalf("nodes: exit %d, %v", code, err)
	}
	var ids []string
	for _, n := range cat.Nodes {
		ids = append(ids, n.TypeID)
	}
	want := []string{"code", "collect_files", "database", "delay", "desktop_notification", "execute_workflow", "get_variable", "http_request", "if", "json", "loop", "manual_trigger",
		"merge", "output", "schedule", "send_email", "set_variable", "shell_command", "stop", "switch", "text_to_file", "transform_data", "wait", "webhook"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("catalog = %v; want %v", ids, want)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	if code, _, errs := call(t, "", "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: exit %d, %s", code, errs)
	}
	if code, _, errs := call(t, "", "run"); code != 2 || !strings.Contains(errs, "one workflow file") {
		t.Errorf("run without file: exit %d, %s", code, errs)
	}
	if code, _, _ := call(t, "", "run", "--vars", "[1]", "testdata/hello.json"); code != 2 {
		t.Errorf("bad --vars: exit %d", code)
	}
}
