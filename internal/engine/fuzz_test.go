package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/workflow"
)

// FuzzRun runs arbitrary documents: whatever the input, a run ends with a
// result that agrees with itself and with the validator, and nothing panics.
func FuzzRun(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, file := range files {
		if strings.HasSuffix(file, ".trace.json") {
			continue
		}
		data, _ := os.ReadFile(file)
		var gc goldenCase
		if json.Unmarshal(data, &gc) == nil {
			f.Add(string(gc.Workflow))
		}
	}
	reg := testRegistry(newProbe())
	e := engine.New(engine.Options{Registry: reg, MaxDuration: 50 * time.Millisecond})
	f.Fuzz(func(t *testing.T, doc string) {
		w, err := workflow.Parse([]byte(doc))
		if err != nil {
			return
		}
		for _, n := range w.Nodes {
			if n.NodeTypeID == "block" || n.NodeTypeID == "panic" {
				return // test types that wait for the test or panic on purpose
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		res := e.Run(ctx, engine.Request{Workflow: w})
		if res.Success != (res.Error == nil) || res.Success != (res.Status == engine.RunSuccess) {
			t.Fatalf("inconsistent result: success %v, status %q, error %v", res.Success, res.Status, res.Error)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
		valid := w.Validate(reg).Valid
		if valid == (res.ErrorCode == engine.CodeInvalidWorkflow) {
			t.Fatalf("validator says valid=%v, run says %q", valid, res.ErrorCode)
		}
	})
}
