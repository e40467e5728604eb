// Package storetest is the conformance suite of store.Store: every
// implementation runs it against a real database.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/store"
)

// Open returns a fresh, empty store for one test; the suite closes it.
type Open func(t *testing.T) store.Store

// Run runs the suite.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"WorkflowRoundTrip", testWorkflowRoundTrip},
		{"WorkflowVersions", testWorkflowVersions},
		{"WorkflowList", testWorkflowList},
		{"WorkflowDelete", testWorkflowDelete},
		{"ConcurrentSaves", testConcurrentSaves},
		{"Runs", testRuns},
		{"RunFailUnfinished", testRunFailUnfinished},
		{"Variables", testVariables},
		{"Tokens", testTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(t, s)
		})
	}
}

func wf(id, name string) *store.Workflow {
	return &store.Workflow{ID: id, Name: name, Tags: []string{"a", "b"},
		Doc: []byte(fmt.Sprintf(`{"id":%q,"name":%q,"nodes":[],"edges":[]}`, id, name))}
}

func ptr[T any](v T) *T { return &v }

func testWorkflowRoundTrip(t *testing.T, s store.Store) {
	ctx := t.Context()
	w := wf("w1", "First")
	w.CollectionID = ptr("c1")
	before := time.Now().Add(-time.Second)
	v, err := s.WorkflowPut(ctx, w, nil)
	if err != nil || v != 1 {
		t.Fatalf("WorkflowPut = %d, %v; want 1", v, err)
	}
	got, err := s.WorkflowGet(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "w1" || got.Name != "First" || !reflect.DeepEqual(got.Tags, []string{"a", "b"}) ||
		got.CollectionID == nil || *got.CollectionID != "c1" || string(got.Doc) != string(w.Doc) || got.RowVersion != 1 {
		t.Errorf("WorkflowGet = %+v", got)
	}
	if got.CreatedAt.Before(before) || got.UpdatedAt.Before(got.CreatedAt) {
		t.Errorf("times = %v, %v", got.CreatedAt, got.UpdatedAt)
	}
	if _, err := s.WorkflowGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WorkflowGet(missing) error = %v; want ErrNotFound", err)
	}
	w2 := wf("w2", "No tags")
	w2.Tags = nil
	if _, err := s.WorkflowPut(ctx, w2, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.WorkflowGet(ctx, "w2"); got.Tags == nil || len(got.Tags) != 0 || got.CollectionID != nil {
		t.Errorf("nil tags stored as %#v, collection %v; want [] and nil", got.Tags, got.CollectionID)
	}
}

func testWorkflowVersions(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.WorkflowPut(ctx, wf("w", "v1"), ptr(int64(1))); !errors.Is(err, store.ErrPrecondition) {
		t.Errorf("If-Match on a missing workflow: %v; want ErrPrecondition", err)
	}
	if _, err := s.WorkflowGet(ctx, "w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused put stored something: %v", err)
	}
	for want := int64(1); want <= 3; want++ {
		if v, err := s.WorkflowPut(ctx, wf("w", fmt.Sprint("v", want)), nil); err != nil || v != want {
			t.Fatalf("put %d = %d, %v", want, v, err)
		}
	}
	if v, err := s.WorkflowPut(ctx, wf("w", "v4"), ptr(int64(3))); err != nil || v != 4 {
		t.Fatalf("put with current If-Match = %d, %v; want 4", v, err)
	}
	_, err := s.WorkflowPut(ctx, wf("w", "stale"), ptr(int64(2)))
	var conflict *store.VersionConflictError
	if !errors.As(err, &conflict) || conflict.Current != 4 {
		t.Fatalf("stale If-Match: %v; want a conflict naming 4", err)
	}
	if got, _ := s.WorkflowGet(ctx, "w"); got.Name != "v4" || got.RowVersion != 4 {
		t.Errorf("after a stale put: %s version %d; want v4 version 4", got.Name, got.RowVersion)
	}
}

func testWorkflowList(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := range 25 {
		if _, err := s.WorkflowPut(ctx, wf(fmt.Sprintf("w%02d", i), fmt.Sprint("n", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	items, total, err := s.WorkflowList(ctx, store.ListOptions{Limit: 10, Offset: 20})
	if err != nil || total != 25 || len(items) != 5 || items[0].ID != "w20" || items[4].ID != "w24" {
		t.Fatalf("page 3 = %v (total %d, %v)", items, total, err)
	}
	if items[0].Name != "n20" || len(items[0].Tags) != 2 || items[0].UpdatedAt.IsZero() {
		t.Errorf("summary = %+v", items[0])
	}
	items, total, _ = s.WorkflowList(ctx, store.ListOptions{Limit: 2, IDs: []string{"w03", "w07", "w11", "ghost"}})
	if total != 3 || len(items) != 2 || items[0].ID != "w03" || items[1].ID != "w07" {
		t.Errorf("restricted list = %v, total %d; want w03 w07 of 3", items, total)
	}
	items, total, _ = s.WorkflowList(ctx, store.ListOptions{Limit: 10, IDs: []string{}})
	if total != 0 || len(items) != 0 || items == nil {
		t.Errorf("empty restriction = %#v, %d; want an empty list", items, total)
	}
}

func testWorkflowDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, id := range []string{"keep", "gone"} {
		if _, err := s.WorkflowPut(ctx, wf(id, id), nil); err != nil {
			t.Fatal(err)
		}
		r := &store.Run{ID: "run-" + id, WorkflowID: id, Status: store.RunSuccess, Trigger: "manual",
			StartedAt: time.Now(), FinishedAt: time.Now(), Result: []byte(`{}`)}
		if err := s.RunFinish(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.VariableSet(ctx, id, "k", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WorkflowDelete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkflowGet(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted workflow: %v", err)
	}
	if _, err := s.RunGet(ctx, "run-gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted workflow's run: %v; want it gone", err)
	}
	if _, ok, _ := s.VariableGet(ctx, "gone", "k"); ok {
		t.Errorf("deleted workflow's variable is still there")
	}
	if _, err := s.RunGet(ctx, "run-keep"); err != nil {
		t.Errorf("other workflow's run: %v", err)
	}
	if err := s.WorkflowDelete(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v; want ErrNotFound", err)
	}
}

// testConcurrentSaves races writers on one workflow with If-Match: every
// version is won exactly once, and writes to other workflows all land.
func testConcurrentSaves(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.WorkflowPut(ctx, wf("hot", "v1"), nil); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		wins = map[int64]int{}
		wg   sync.WaitGroup
	)
	for g := range 16 {
		wg.Go(func() {
			for range 20 {
				cur, err := s.WorkflowGet(ctx, "hot")
				if err != nil {
					t.Error(err)
					return
				}
				v, err := s.WorkflowPut(ctx, wf("hot", fmt.Sprint("by ", g)), &cur.RowVersion)
				var conflict *store.VersionConflictError
				switch {
				case err == nil:
					mu.Lock()
					wins[v]++
					mu.Unlock()
				case errors.As(err, &conflict):
				default:
					t.Error(err)
				}
				if _, err := s.WorkflowPut(ctx, wf(fmt.Sprintf("own-%d", g), "x"), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	final, _ := s.WorkflowGet(ctx, "hot")
	if int64(len(wins)) != final.RowVersion-1 {
		t.Errorf("%d versions won, final version %d", len(wins), final.RowVersion)
	}
	for v, n := range wins {
		if n != 1 {
			t.Errorf("version %d won %d times", v, n)
		}
	}
	for g := range 16 {
		if w, err := s.WorkflowGet(ctx, fmt.Sprintf("own-%d", g)); err != nil || w.RowVersion != 20 {
			t.Errorf("own-%d: %v, %v; want version 20", g, w, err)
		}
	}
}

func testRuns(t *testing.T, s store.Store) {
	ctx := t.Context()
	start := time.Now().Truncate(time.Millisecond)
	r := &store.Run{ID: "r1", WorkflowID: "w", Status: store.RunRunning, Trigger: "manual", StartedAt: start}
	if err := s.RunStart(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.FinishedAt, r.ErrorCode, r.Error, r.Result = store.RunFailed, start.Add(time.Second), "BOOM", "it broke", []byte(`{"success":false}`)
	if err := s.RunFinish(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunFailed || got.ErrorCode != "BOOM" || got.Error != "it broke" || string(got.Result) != `{"success":false}` ||
		!got.StartedAt.Equal(start) || !got.FinishedAt.Equal(start.Add(time.Second)) || got.Trigger != "manual" {
		t.Errorf("RunGet = %+v", got)
	}
	for i := range 3 {
		if err := s.RunFinish(ctx, &store.Run{ID: fmt.Sprint("later", i), WorkflowID: "w", Status: store.RunSuccess, Trigger: "manual",
			StartedAt: start.Add(time.Duration(i+1) * time.Minute), FinishedAt: start.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.RunList(ctx, "w", store.ListOptions{Limit: 2})
	if err != nil || len(runs) != 2 || runs[0].ID != "later2" || runs[1].ID != "later1" {
		t.Errorf("RunList = %v, %v; want the newest two", runs, err)
	}
	if _, err := s.RunGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet(missing): %v", err)
	}
}

func testRunFailUnfinished(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if err := s.RunStart(ctx, &store.Run{ID: id, WorkflowID: "w", Status: store.RunRunning, Trigger: "manual", StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RunFinish(ctx, &store.Run{ID: "b", WorkflowID: "w", Status: store.RunSuccess, Trigger: "manual", StartedAt: time.Now(), FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	n, err := s.RunFailUnfinished(context.Background(), "server stopped")
	if err != nil || n != 1 {
		t.Fatalf("RunFailUnfinished = %d, %v; want 1", n, err)
	}
	a, _ := s.RunGet(ctx, "a")
	b, _ := s.RunGet(ctx, "b")
	if a.Status != store.RunFailed || a.Error != "server stopped" || a.FinishedAt.IsZero() || b.Status != store.RunSuccess {
		t.Errorf("after: a %+v, b %+v", a, b)
	}
}

func testVariables(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, ok, err := s.VariableGet(ctx, "w", "k"); ok || err != nil {
		t.Errorf("missing variable: %v %v", ok, err)
	}
	for _, v := range []any{41, "text", map[string]any{"a": []any{1.5, true, nil}}, nil} {
		if err := s.VariableSet(ctx, "w", "k", v); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.VariableGet(ctx, "w", "k")
		if err != nil || !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("VariableGet = %#v, %v, %v; want %#v", got, ok, err, v)
		}
	}
	if _, ok, _ := s.VariableGet(ctx, "other", "k"); ok {
		t.Errorf("variables leak across workflows")
	}
}

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	tok := &store.Token{ID: "t1", Label: "initial", Scopes: []string{"read", "write", "admin"}, SecretHash: "h1", CreatedAt: time.Now(), ExpiresAt: &exp}
	if ok, err := s.TokenInsert(ctx, tok); !ok || err != nil {
		t.Fatalf("TokenInsert = %v, %v", ok, err)
	}
	dup := *tok
	dup.ID = "t2"
	if ok, err := s.TokenInsert(ctx, &dup); ok || err != nil {
		t.Errorf("second insert of one hash = %v, %v; want not inserted", ok, err)
	}
	got, err := s.TokenByHash(ctx, "h1")
	if err != nil || got.ID != "t1" || !reflect.DeepEqual(got.Scopes, tok.Scopes) || got.RevokedAt != nil || !got.ExpiresAt.Equal(exp) {
		t.Errorf("TokenByHash = %+v, %v", got, err)
	}
	if _, err := s.TokenByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash(missing): %v", err)
	}
}
