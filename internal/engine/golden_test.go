package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/workflow"
)

var runIDs = regexp.MustCompile(`"execution_id": "[0-9a-f]{32}"`)

var update = flag.Bool("update", false, "rewrite the golden run traces in testdata/golden")

// goldenCase is a testdata/golden/<name>.json file.
type goldenCase struct {
	Description string            `json:"description"`
	Workflow    json.RawMessage   `json:"workflow"`
	Workflows   []json.RawMessage `json:"workflows"`
	Request     struct {
		Variables map[string]any `json:"variables"`
		Payload   any            `json:"payload"`
	} `json:"request"`
}

// goldenTrace is the recorded behaviour of a run: its events in order and
// its result without times and ids.
type goldenTrace struct {
	Events           []string                 `json:"events"`
	Success          bool                     `json:"success"`
	Status           string                   `json:"status"`
	Error            *string                  `json:"error"`
	ErrorCode        string                   `json:"error_code,omitempty"`
	ErrorNodeID      string                   `json:"error_node_id,omitempty"`
	ValidationErrors []workflow.Finding       `json:"validation_errors"`
	NodeStatus       map[string]engine.Status `json:"node_status"`
	NodeOutputs      map[string]any           `json:"node_outputs"`
	Logs             []string                 `json:"logs"`
}

// TestGolden runs every workflow under testdata/golden one node at a time
// (so the order of events is fixed) and compares the run with its trace.
// Run with -update to rewrite the traces after a deliberate change.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".trace.json") {
			cases = append(cases, f)
		}
	}
	if len(cases) < 20 {
		t.Fatalf("found %d golden workflows; want at least 20", len(cases))
	}
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := runGolden(t, file)
			traceFile := strings.TrimSuffix(file, ".json") + ".trace.json"
			if *update {
				if err := os.WriteFile(traceFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(traceFile)
			if err != nil {
				t.Fatalf("no trace (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("run trace differs from %s\ngot:\n%s", traceFile, got)
			}
		})
	}
}

func runGolden(t *testing.T, file string) []byte {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var gc goldenCase
	if err := json.Unmarshal(data, &gc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	w := parse(t, string(gc.Workflow))
	src := &memWorkflows{m: map[string]*workflow.Workflow{}}
	for _, raw := range gc.Workflows {
		c := parse(t, string(raw))
		src.m[c.ID] = c
	}
	rec := &recorder{main: w.ID}
	e := engine.New(engine.Options{Registry: testRegistry(newProbe()), Events: rec, MaxParallel: 1, Workflows: src})
	req := engine.Request{Workflow: w, Variables: gc.Request.Variables}
	if gc.Request.Payload != nil {
		req.Payload, req.HasPayload = gc.Request.Payload, true
	}
	res := e.Run(context.Background(), req)
	tr := goldenTrace{
		Events: rec.trace(), Success: res.Success, Status: res.Status, Error: res.Error,
		ErrorCode: res.ErrorCode, ErrorNodeID: res.ErrorNodeID, ValidationErrors: res.ValidationErrors,
		NodeStatus: res.NodeStatus, NodeOutputs: res.NodeOutputs, Logs: []string{},
	}
	for _, l := range res.Logs {
		tr.Logs = append(tr.Logs, l.Level+" "+l.NodeID+": "+l.Message)
	}
	out, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// Run ids are random.
	out = runIDs.ReplaceAll(out, []byte(`"execution_id": "<run id>"`))
	return append(out, '\n')
}
