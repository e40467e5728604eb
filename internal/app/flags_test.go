package app_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func shellDoc(command string) string {
	b, _ := json.Marshal(command)
	return `{"id":"sh","name":"Shell","nodes":[{"id":"t","node_type_id":"manual_trigger"},
	 {"id":"s","node_type_id":"shell_command","config":{"command":` + string(b) + `}},
	 {"id":"o","node_type_id":"output","config":{"field":"stdout"}}],
	 "edges":[{"id":"e1","from":"t","to":"s"},{"id":"e2","from":"s","to":"o"}]}`
}

// enabled reads a type's enabled flag from the server's catalog.
func enabled(t *testing.T, p *proc, typeID string) bool {
	t.Helper()
	cat, err := p.client(t, testToken).Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range cat.Nodes {
		var d struct {
			TypeID  string `json:"type_id"`
			Enabled bool   `json:"enabled"`
		}
		json.Unmarshal(raw, &d)
		if d.TypeID == typeID {
			return d.Enabled
		}
	}
	t.Fatalf("%s is not in the catalog", typeID)
	return false
}

// TestDangerousFlags: without --allow-shell the Shell Command node is
// switched off in the catalog and a run reaching it fails naming the flag;
// with it, the command runs without the server's SVC_ variables unless
// --allow-env-vars lets one through.
func TestDangerousFlags(t *testing.T) {
	t.Parallel()
	env := []string{"SVC_TOKEN=" + testToken, "SVC_SHARED=visible", "SVC_HIDDEN=secret"}
	off := start(t, env, "--data-dir", t.TempDir())
	for _, typ := range []string{"shell_command", "code", "database"} {
		if enabled(t, off, typ) {
			t.Errorf("%s is enabled without its flag", typ)
		}
	}
	c := off.client(t, testToken)
	if _, err := c.SaveWorkflow(t.Context(), []byte(shellDoc("echo hi")), 0); err != nil {
		t.Fatal(err)
	}
	res, err := c.RunWorkflow(t.Context(), "sh", nil)
	if err != nil || res.Success || res.Error == nil || !strings.Contains(*res.Error, "--allow-shell") {
		t.Errorf("run without --allow-shell = %+v, %v; want a failure naming --allow-shell", res, err)
	}

	on := start(t, env, "--data-dir", t.TempDir(), "--allow-shell", "--allow-env-vars", "SVC_SHARED")
	if !enabled(t, on, "shell_command") || enabled(t, on, "code") {
		t.Error("--allow-shell must switch on shell_command and nothing else")
	}
	c = on.client(t, testToken)
	if _, err := c.SaveWorkflow(t.Context(), []byte(shellDoc(`echo "[$SVC_SHARED][$SVC_HIDDEN][$SVC_TOKEN]"`)), 0); err != nil {
		t.Fatal(err)
	}
	res, err = c.RunWorkflow(t.Context(), "sh", nil)
	if err != nil || !res.Success {
		t.Fatalf("run with --allow-shell = %+v, %v", res, err)
	}
	if out := string(res.NodeOutputs["o"]); !strings.Contains(out, `[visible][][]`) {
		t.Errorf("output = %s; want only SVC_SHARED passed through", out)
	}
}
