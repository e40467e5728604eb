package scheduler_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

// BenchmarkResume resumes 2,000 stored always_on interval jobs, as a
// restart does: go test ./internal/scheduler -run '^$' -bench Resume.
func BenchmarkResume(b *testing.B) {
	const jobs = 2000
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	eng := engine.New(engine.Options{Registry: node.Default(), Variables: st})
	for i := range jobs {
		id := fmt.Sprintf("j%04d", i)
		doc := fmt.Sprintf(`{"id":%q,"name":%q,"nodes":[{"id":"t","node_type_id":"schedule","config":{"interval_secs":3600}}],"edges":[]}`, id, id)
		if _, err := st.WorkflowPut(ctx, &store.Workflow{ID: id, Name: id, Doc: []byte(doc)}, nil); err != nil {
			b.Fatal(err)
		}
		if err := st.JobPut(ctx, &store.Job{WorkflowID: id, WorkflowName: id, Status: store.JobActive, AlwaysOn: true}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		s := scheduler.New(scheduler.Options{Store: st, Engine: eng})
		if err := s.Resume(ctx); err != nil {
			b.Fatal(err)
		}
		if n := len(s.Jobs()); n != jobs {
			b.Fatalf("%d jobs resumed; want %d", n, jobs)
		}
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*jobs), "µs/job")
}
