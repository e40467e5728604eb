// Package storetest is the conformance suite of store.Store: every
// implementation runs it against a real database.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
		{"TokenList", testTokenList},
		{"TokenRevoke", testTokenRevoke},
		{"TokenGrants", testTokenGrants},
		{"ConcurrentGrantRemove", testConcurrentGrantRemove},
		{"Credentials", testCredentials},
		{"CredentialPut", testCredentialPut},
		{"Jobs", testJobs},
		{"JobList", testJobList},
		{"JobsAlwaysOn", testJobsAlwaysOn},
		{"JobDelete", testJobDelete},
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

// tokenString shows a token with its times in Unix milliseconds, so that
// tokens compare by value whatever the time zone a store returns.
func tokenString(t *store.Token) string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s %q scopes %v hash %s created %d revoked %s expires %s grants %v",
		t.ID, t.Label, t.Scopes, t.SecretHash, t.CreatedAt.UnixMilli(), msString(t.RevokedAt), msString(t.ExpiresAt), t.WorkflowIDs)
}

func msString(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return fmt.Sprint(t.UnixMilli())
}

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := time.Now().Truncate(time.Millisecond)
	exp := now.Add(time.Hour)
	tok := &store.Token{ID: "t1", Label: "initial", Scopes: []string{"read", "write", "admin"}, SecretHash: "h1", CreatedAt: now, ExpiresAt: &exp}
	if ok, err := s.TokenInsert(ctx, tok); !ok || err != nil {
		t.Fatalf("TokenInsert = %v, %v; want true, nil", ok, err)
	}
	scoped := &store.Token{ID: "t2", Label: "scoped", Scopes: []string{"read"}, SecretHash: "h2", CreatedAt: now,
		WorkflowIDs: []string{"wf-c", "wf-a", "wf-b", "wf-a"}}
	if ok, err := s.TokenInsert(ctx, scoped); !ok || err != nil {
		t.Fatalf("TokenInsert(with grants) = %v, %v; want true, nil", ok, err)
	}
	want := map[string]string{
		"t1": tokenString(tok),
		"t2": tokenString(&store.Token{ID: "t2", Label: "scoped", Scopes: []string{"read"}, SecretHash: "h2", CreatedAt: now,
			WorkflowIDs: []string{"wf-a", "wf-b", "wf-c"}}),
	}
	for id, hash := range map[string]string{"t1": "h1", "t2": "h2"} {
		got, err := s.TokenByHash(ctx, hash)
		if err != nil || tokenString(got) != want[id] {
			t.Errorf("TokenByHash(%q) = %s, %v; want %s", hash, tokenString(got), err, want[id])
		}
		got, err = s.TokenGet(ctx, id)
		if err != nil || tokenString(got) != want[id] {
			t.Errorf("TokenGet(%q) = %s, %v; want %s", id, tokenString(got), err, want[id])
		}
	}
	if got, _ := s.TokenGet(ctx, "t1"); got != nil && len(got.WorkflowIDs) != 0 {
		t.Errorf("unrestricted token grants = %v; want none", got.WorkflowIDs)
	}

	// A second token with a stored hash is not inserted, grants and all.
	dup := &store.Token{ID: "t3", Label: "dup", Scopes: []string{"read"}, SecretHash: "h1", CreatedAt: now, WorkflowIDs: []string{"wf-x"}}
	if ok, err := s.TokenInsert(ctx, dup); ok || err != nil {
		t.Errorf("TokenInsert(stored hash) = %v, %v; want false, nil", ok, err)
	}
	if got, err := s.TokenGet(ctx, "t3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenGet(not inserted) = %s, %v; want ErrNotFound", tokenString(got), err)
	}
	// A new hash under a taken id is refused and changes nothing.
	taken := &store.Token{ID: "t2", Label: "other", Scopes: []string{"admin"}, SecretHash: "h9", CreatedAt: now, WorkflowIDs: []string{"wf-x"}}
	if ok, err := s.TokenInsert(ctx, taken); ok || !errors.Is(err, store.ErrExists) {
		t.Errorf("TokenInsert(taken id) = %v, %v; want false, ErrExists", ok, err)
	}
	if got, err := s.TokenGet(ctx, "t2"); err != nil || tokenString(got) != want["t2"] {
		t.Errorf("after a refused insert TokenGet = %s, %v; want %s", tokenString(got), err, want["t2"])
	}
	if got, err := s.TokenByHash(ctx, "h9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash(refused) = %s, %v; want ErrNotFound", tokenString(got), err)
	}

	for _, tt := range []struct {
		name string
		get  func() (*store.Token, error)
	}{
		{"TokenByHash", func() (*store.Token, error) { return s.TokenByHash(ctx, "nope") }},
		{"TokenGet", func() (*store.Token, error) { return s.TokenGet(ctx, "nope") }},
	} {
		if got, err := tt.get(); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s(missing) = %s, %v; want ErrNotFound", tt.name, tokenString(got), err)
		}
	}
}

func testTokenList(t *testing.T, s store.Store) {
	ctx := t.Context()
	if got, err := s.TokenList(ctx); err != nil || len(got) != 0 {
		t.Errorf("TokenList(empty store) = %v, %v; want none", got, err)
	}
	base := time.Now().Truncate(time.Millisecond)
	// Inserted out of order: the list is by creation time.
	tokens := []*store.Token{
		{ID: "mid", Label: "m", Scopes: []string{"read"}, SecretHash: "hm", CreatedAt: base.Add(time.Minute), WorkflowIDs: []string{"z", "y"}},
		{ID: "new", Label: "n", Scopes: []string{"read", "write"}, SecretHash: "hn", CreatedAt: base.Add(time.Hour)},
		{ID: "old", Label: "o", Scopes: []string{"admin"}, SecretHash: "ho", CreatedAt: base},
	}
	for _, tok := range tokens {
		if _, err := s.TokenInsert(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TokenList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var gotS []string
	for i := range got {
		gotS = append(gotS, tokenString(&got[i]))
	}
	sorted := *tokens[0]
	sorted.WorkflowIDs = []string{"y", "z"}
	wantS := []string{tokenString(tokens[2]), tokenString(&sorted), tokenString(tokens[1])}
	if !reflect.DeepEqual(gotS, wantS) {
		t.Errorf("TokenList =\n%s\nwant\n%s", strings.Join(gotS, "\n"), strings.Join(wantS, "\n"))
	}
}

func testTokenRevoke(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := time.Now().Truncate(time.Millisecond)
	for _, id := range []string{"a", "b"} {
		if _, err := s.TokenInsert(ctx, &store.Token{ID: id, Label: id, Scopes: []string{"read"}, SecretHash: "h" + id, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	first, later := now.Add(time.Minute), now.Add(time.Hour)
	tests := []struct {
		id      string
		at      time.Time
		wantErr error
		// want is the revocation time of a then.
		want time.Time
	}{
		{"a", first, nil, first},
		{"a", later, nil, first}, // revoked already: the first time stays
		{"a", now, nil, first},   // even when the new time is earlier
		{"nope", later, store.ErrNotFound, first},
	}
	for _, tt := range tests {
		if err := s.TokenRevoke(ctx, tt.id, tt.at); !errors.Is(err, tt.wantErr) {
			t.Errorf("TokenRevoke(%q, %d) = %v; want %v", tt.id, tt.at.UnixMilli(), err, tt.wantErr)
		}
		got, err := s.TokenByHash(ctx, "ha")
		if err != nil {
			t.Fatal(err)
		}
		if msString(got.RevokedAt) != msString(&tt.want) {
			t.Errorf("after TokenRevoke(%q, %d): a revoked at %s; want %d", tt.id, tt.at.UnixMilli(), msString(got.RevokedAt), tt.want.UnixMilli())
		}
	}
	list, err := s.TokenList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revoked := map[string]string{}
	for _, tok := range list {
		revoked[tok.ID] = msString(tok.RevokedAt)
	}
	if want := map[string]string{"a": msString(&first), "b": "none"}; !reflect.DeepEqual(revoked, want) {
		t.Errorf("TokenList revocations = %v; want %v", revoked, want)
	}
}

func testTokenGrants(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := time.Now().Truncate(time.Millisecond)
	for _, tok := range []*store.Token{
		{ID: "scoped", Label: "s", Scopes: []string{"read"}, SecretHash: "hs", CreatedAt: now, WorkflowIDs: []string{"w2"}},
		{ID: "open", Label: "o", Scopes: []string{"read"}, SecretHash: "ho", CreatedAt: now},
		{ID: "revoked", Label: "r", Scopes: []string{"read"}, SecretHash: "hr", CreatedAt: now, WorkflowIDs: []string{"w1", "w2"}},
	} {
		if _, err := s.TokenInsert(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TokenRevoke(ctx, "revoked", now); err != nil {
		t.Fatal(err)
	}
	// Each step runs on the state the steps before it left; want is the
	// token's grants afterwards.
	tests := []struct {
		op, token, workflow string
		wantErr             error
		want                []string
	}{
		{"add", "scoped", "w3", nil, []string{"w2", "w3"}},
		{"add", "scoped", "w1", nil, []string{"w1", "w2", "w3"}},
		{"add", "scoped", "w1", nil, []string{"w1", "w2", "w3"}}, // idempotent
		{"add", "nope", "w1", store.ErrNotFound, nil},
		{"add", "revoked", "w3", store.ErrNotFound, []string{"w1", "w2"}},
		{"remove", "scoped", "w2", nil, []string{"w1", "w3"}},
		{"remove", "scoped", "w2", nil, []string{"w1", "w3"}},    // not held: no error
		{"remove", "scoped", "ghost", nil, []string{"w1", "w3"}}, // never held
		{"remove", "scoped", "w1", nil, []string{"w3"}},
		{"remove", "scoped", "w3", store.ErrLastGrant, []string{"w3"}}, // changes nothing
		{"remove", "scoped", "ghost", nil, []string{"w3"}},             // not held, even with one grant
		{"add", "scoped", "w1", nil, []string{"w1", "w3"}},
		{"remove", "scoped", "w3", nil, []string{"w1"}},
		{"remove", "nope", "w1", store.ErrNotFound, nil},
		{"remove", "open", "w1", nil, nil}, // unrestricted stays unrestricted
		{"add", "open", "w9", nil, []string{"w9"}},
		{"remove", "open", "w9", store.ErrLastGrant, []string{"w9"}},
		{"remove", "revoked", "w1", nil, []string{"w2"}},
		{"remove", "revoked", "w2", store.ErrLastGrant, []string{"w2"}},
	}
	for _, tt := range tests {
		var err error
		if tt.op == "add" {
			err = s.GrantAdd(ctx, tt.token, tt.workflow)
		} else {
			err = s.GrantRemove(ctx, tt.token, tt.workflow)
		}
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s(%q, %q) = %v; want %v", tt.op, tt.token, tt.workflow, err, tt.wantErr)
		}
		if tt.token == "nope" {
			continue
		}
		got, err := s.TokenGet(ctx, tt.token)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.WorkflowIDs) != fmt.Sprint(tt.want) {
			t.Errorf("after %s(%q, %q): grants %v; want %v", tt.op, tt.token, tt.workflow, got.WorkflowIDs, tt.want)
		}
	}
	// The other reads see the same grants.
	if got, err := s.TokenByHash(ctx, "hs"); err != nil || !reflect.DeepEqual(got.WorkflowIDs, []string{"w1"}) {
		t.Errorf("TokenByHash grants = %s, %v; want [w1]", tokenString(got), err)
	}
	list, err := s.TokenList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	grants := map[string]string{}
	for _, tok := range list {
		grants[tok.ID] = fmt.Sprint(tok.WorkflowIDs)
	}
	if want := map[string]string{"scoped": "[w1]", "open": "[w9]", "revoked": "[w2]"}; !reflect.DeepEqual(grants, want) {
		t.Errorf("TokenList grants = %v; want %v", grants, want)
	}
}

// testConcurrentGrantRemove races removals of every grant of a token: one
// of them must be refused, and the token must keep exactly that grant.
func testConcurrentGrantRemove(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, tt := range []struct{ grants, rounds int }{{2, 60}, {3, 20}, {8, 20}} {
		n := tt.grants
		for round := range tt.rounds {
			id := fmt.Sprintf("t%d-%d", n, round)
			var grants []string
			for i := range n {
				grants = append(grants, fmt.Sprint("w", i))
			}
			if _, err := s.TokenInsert(ctx, &store.Token{ID: id, Label: id, Scopes: []string{"read"}, SecretHash: "h" + id,
				CreatedAt: time.Now(), WorkflowIDs: grants}); err != nil {
				t.Fatal(err)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, g := range grants {
				wg.Go(func() { errs[i] = s.GrantRemove(ctx, id, g) })
			}
			wg.Wait()
			var refused []string
			for i, err := range errs {
				switch {
				case errors.Is(err, store.ErrLastGrant):
					refused = append(refused, grants[i])
				case err != nil:
					t.Errorf("GrantRemove(%q, %q) = %v", id, grants[i], err)
				}
			}
			got, err := s.TokenGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(refused) != 1 || !reflect.DeepEqual(got.WorkflowIDs, refused) {
				t.Fatalf("%d concurrent removals on %s: refused %v, left %v; want one refused and kept", n, id, refused, got.WorkflowIDs)
			}
		}
	}
}

// credentialString shows a credential with its times in Unix
// milliseconds, so that credentials compare by value.
func credentialString(c *store.Credential) string {
	if c == nil {
		return "<nil>"
	}
	str := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return strconv.Quote(*p)
	}
	return fmt.Sprintf("%s %q type %s secret %x provider %s model %s base_url %s created %d updated %d",
		c.ID, c.Name, c.Type, c.Ciphertext, str(c.Provider), str(c.Model), str(c.BaseURL), c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli())
}

func testCredentials(t *testing.T, s store.Store) {
	ctx := t.Context()
	if n, err := s.CredentialCount(ctx); n != 0 || err != nil {
		t.Errorf("CredentialCount(empty store) = %d, %v; want 0", n, err)
	}
	if got, err := s.CredentialList(ctx); len(got) != 0 || err != nil {
		t.Errorf("CredentialList(empty store) = %v, %v; want none", got, err)
	}
	at := time.Now().Truncate(time.Millisecond)
	creds := []*store.Credential{
		{ID: "b-key", Name: "B", Type: "api_key", Ciphertext: []byte{0, 1, 0xff}, CreatedAt: at, UpdatedAt: at},
		{ID: "a-llm", Name: "LLM", Type: "bearer", Ciphertext: []byte("sealed"), Provider: ptr("openai"), Model: ptr("gpt-x"),
			BaseURL: ptr("https://llm.example"), CreatedAt: at.Add(time.Minute), UpdatedAt: at.Add(2 * time.Minute)},
		{ID: "c-basic", Name: "C", Type: "basic", Ciphertext: []byte("x"), CreatedAt: at, UpdatedAt: at},
	}
	for _, c := range creds {
		if err := s.CredentialPut(ctx, c, false); err != nil {
			t.Fatalf("CredentialPut(%s) = %v", c.ID, err)
		}
	}
	for _, c := range creds {
		got, err := s.CredentialGet(ctx, c.ID)
		if err != nil || credentialString(got) != credentialString(c) {
			t.Errorf("CredentialGet(%q) = %s, %v; want %s", c.ID, credentialString(got), err, credentialString(c))
		}
	}
	list, err := s.CredentialList(ctx)
	var gotIDs []string
	for _, c := range list {
		gotIDs = append(gotIDs, c.ID)
	}
	if err != nil || !reflect.DeepEqual(gotIDs, []string{"a-llm", "b-key", "c-basic"}) {
		t.Errorf("CredentialList ids = %v, %v; want [a-llm b-key c-basic]", gotIDs, err)
	}
	if len(list) == 3 && credentialString(&list[0]) != credentialString(creds[1]) {
		t.Errorf("CredentialList[0] = %s; want %s", credentialString(&list[0]), credentialString(creds[1]))
	}
	if n, err := s.CredentialCount(ctx); n != 3 || err != nil {
		t.Errorf("CredentialCount = %d, %v; want 3", n, err)
	}

	if err := s.CredentialDelete(ctx, "b-key"); err != nil {
		t.Fatalf("CredentialDelete = %v", err)
	}
	tests := []struct {
		name string
		err  func() error
	}{
		{"CredentialGet(deleted)", func() error { _, err := s.CredentialGet(ctx, "b-key"); return err }},
		{"CredentialDelete(deleted)", func() error { return s.CredentialDelete(ctx, "b-key") }},
		{"CredentialGet(missing)", func() error { _, err := s.CredentialGet(ctx, "nope"); return err }},
		{"CredentialDelete(missing)", func() error { return s.CredentialDelete(ctx, "nope") }},
	}
	for _, tt := range tests {
		if err := tt.err(); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s = %v; want ErrNotFound", tt.name, err)
		}
	}
	if n, err := s.CredentialCount(ctx); n != 2 || err != nil {
		t.Errorf("CredentialCount after a delete = %d, %v; want 2", n, err)
	}
}

func testCredentialPut(t *testing.T, s store.Store) {
	ctx := t.Context()
	created := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	orig := &store.Credential{ID: "k", Name: "Key", Type: "api_key", Ciphertext: []byte("first secret"),
		Provider: ptr("p1"), Model: ptr("m1"), BaseURL: ptr("https://one.example"), CreatedAt: created, UpdatedAt: created}
	if err := s.CredentialPut(ctx, orig, false); err != nil {
		t.Fatal(err)
	}
	later := created.Add(30 * time.Minute)
	// Each step runs on the state the steps before it left; want is the
	// stored credential afterwards, or nil for none.
	tests := []struct {
		name    string
		c       store.Credential
		update  bool
		wantErr error
		want    *store.Credential
	}{{
		name:    "create over a taken id",
		c:       store.Credential{ID: "k", Name: "Other", Type: "bearer", Ciphertext: []byte("other"), CreatedAt: later, UpdatedAt: later},
		wantErr: store.ErrExists,
		want:    orig,
	}, {
		name:   "update without a secret keeps it and the creation time",
		c:      store.Credential{ID: "k", Name: "Renamed", Type: "bearer", Provider: ptr("p2"), Model: ptr("m2"), BaseURL: ptr("https://two.example"), CreatedAt: later, UpdatedAt: later},
		update: true,
		want: &store.Credential{ID: "k", Name: "Renamed", Type: "bearer", Ciphertext: []byte("first secret"),
			Provider: ptr("p2"), Model: ptr("m2"), BaseURL: ptr("https://two.example"), CreatedAt: created, UpdatedAt: later},
	}, {
		name:   "update with a secret replaces it",
		c:      store.Credential{ID: "k", Name: "Renamed", Type: "other", Ciphertext: []byte("second secret"), Provider: ptr("p2"), Model: ptr("m2"), BaseURL: ptr("https://two.example"), CreatedAt: later.Add(time.Minute), UpdatedAt: later.Add(time.Minute)},
		update: true,
		want: &store.Credential{ID: "k", Name: "Renamed", Type: "other", Ciphertext: []byte("second secret"),
			Provider: ptr("p2"), Model: ptr("m2"), BaseURL: ptr("https://two.example"), CreatedAt: created, UpdatedAt: later.Add(time.Minute)},
	}, {
		name:    "update of a missing id creates nothing",
		c:       store.Credential{ID: "ghost", Name: "G", Type: "api_key", Ciphertext: []byte("g"), CreatedAt: later, UpdatedAt: later},
		update:  true,
		wantErr: store.ErrNotFound,
	}}
	for _, tt := range tests {
		c := tt.c
		if err := s.CredentialPut(ctx, &c, tt.update); !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: CredentialPut(%s, %v) = %v; want %v", tt.name, c.ID, tt.update, err, tt.wantErr)
		}
		got, err := s.CredentialGet(ctx, c.ID)
		if tt.want == nil {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: CredentialGet(%q) = %s, %v; want ErrNotFound", tt.name, c.ID, credentialString(got), err)
			}
			continue
		}
		if err != nil || credentialString(got) != credentialString(tt.want) {
			t.Errorf("%s: CredentialGet(%q) =\n%s, %v; want\n%s", tt.name, c.ID, credentialString(got), err, credentialString(tt.want))
		}
	}
	if n, err := s.CredentialCount(ctx); n != 1 || err != nil {
		t.Errorf("CredentialCount = %d, %v; want 1", n, err)
	}
}

// jobString shows a job with its times in Unix milliseconds and its
// trigger re-encoded, so that jobs compare by value whatever the time zone
// or JSON spacing a store returns.
func jobString(j *store.Job) string {
	if j == nil {
		return "<nil>"
	}
	trigger := string(j.Trigger)
	var v any
	if err := json.Unmarshal(j.Trigger, &v); err == nil {
		b, _ := json.Marshal(v)
		trigger = string(b)
	}
	lastError, port := "nil", "nil"
	if j.LastError != nil {
		lastError = strconv.Quote(*j.LastError)
	}
	if j.PortOverride != nil {
		port = strconv.Itoa(*j.PortOverride)
	}
	return fmt.Sprintf("%s %q trigger %s status %s always_on %v runs %d last_run %s next_run %s created %d last_error %s port %s",
		j.WorkflowID, j.WorkflowName, trigger, j.Status, j.AlwaysOn, j.RunCount,
		msString(j.LastRunAt), msString(j.NextRunAt), j.CreatedAt.UnixMilli(), lastError, port)
}

func job(id, status string, alwaysOn bool, created time.Time) *store.Job {
	return &store.Job{WorkflowID: id, WorkflowName: "name of " + id, Status: status, AlwaysOn: alwaysOn, CreatedAt: created,
		Trigger: []byte(fmt.Sprintf(`{"type":"trigger.schedule","node_id":"t","config":{"cron":"*/5 * * * *","workflow":%q}}`, id))}
}

func testJobs(t *testing.T, s store.Store) {
	ctx := t.Context()
	if got, err := s.JobGet(ctx, "w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("JobGet(missing) = %s, %v; want ErrNotFound", jobString(got), err)
	}
	created := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	lastRun, nextRun := created.Add(10*time.Minute), created.Add(2*time.Hour)
	bare := job("w", store.JobPaused, false, created)
	full := &store.Job{WorkflowID: "w", WorkflowName: "Renamed",
		Trigger: []byte(`{"type":"trigger.webhook","node_id":"hook","config":{"path":"/in","secret":"s3cret"}}`),
		Status:  store.JobError, AlwaysOn: true, RunCount: 7, LastRunAt: &lastRun, NextRunAt: &nextRun,
		CreatedAt: created.Add(time.Minute), LastError: ptr("it broke"), PortOverride: ptr(8081)}
	// Each step runs on the state the steps before it left; want is the
	// stored job afterwards.
	tests := []struct {
		name string
		put  *store.Job
		want *store.Job
	}{{
		name: "create with every pointer nil",
		put:  bare,
		want: bare,
	}, {
		name: "replace setting every field keeps the creation time",
		put:  full,
		want: &store.Job{WorkflowID: "w", WorkflowName: "Renamed", Trigger: full.Trigger, Status: store.JobError, AlwaysOn: true,
			RunCount: 7, LastRunAt: &lastRun, NextRunAt: &nextRun, CreatedAt: created, LastError: ptr("it broke"), PortOverride: ptr(8081)},
	}, {
		name: "replace clearing the pointers",
		put:  job("w", store.JobActive, false, created.Add(time.Hour)),
		want: job("w", store.JobActive, false, created),
	}}
	for _, tt := range tests {
		if err := s.JobPut(ctx, tt.put); err != nil {
			t.Fatalf("%s: JobPut = %v", tt.name, err)
		}
		got, err := s.JobGet(ctx, "w")
		if err != nil || jobString(got) != jobString(tt.want) {
			t.Errorf("%s: JobGet =\n%s, %v; want\n%s", tt.name, jobString(got), err, jobString(tt.want))
		}
	}

	// A second job with every field set round-trips beside the first.
	other := *full
	other.WorkflowID = "x"
	if err := s.JobPut(ctx, &other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobGet(ctx, "x"); err != nil || jobString(got) != jobString(&other) {
		t.Errorf("JobGet(x) =\n%s, %v; want\n%s", jobString(got), err, jobString(&other))
	}
}

func jobIDs(jobs []store.Job) []string {
	ids := []string{}
	for _, j := range jobs {
		ids = append(ids, j.WorkflowID)
	}
	return ids
}

func testJobList(t *testing.T, s store.Store) {
	ctx := t.Context()
	if items, total, err := s.JobList(ctx, store.ListOptions{Limit: 10}); err != nil || total != 0 || len(items) != 0 {
		t.Errorf("JobList(empty store) = %v, %d, %v; want none", jobIDs(items), total, err)
	}
	created := time.Now().Truncate(time.Millisecond)
	// Put out of order: the list is by workflow id.
	for _, i := range []int{7, 3, 11, 0, 5, 9, 1, 10, 2, 8, 4, 6} {
		if err := s.JobPut(ctx, job(fmt.Sprintf("w%02d", i), store.JobActive, i%2 == 0, created)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		opts      store.ListOptions
		want      []string
		wantTotal int
	}{
		{"first page", store.ListOptions{Limit: 5}, []string{"w00", "w01", "w02", "w03", "w04"}, 12},
		{"last page", store.ListOptions{Limit: 5, Offset: 10}, []string{"w10", "w11"}, 12},
		{"past the end", store.ListOptions{Limit: 5, Offset: 20}, []string{}, 12},
		{"restricted", store.ListOptions{Limit: 2, IDs: []string{"w09", "ghost", "w03", "w07"}}, []string{"w03", "w07"}, 3},
		{"restricted second page", store.ListOptions{Limit: 2, Offset: 2, IDs: []string{"w09", "ghost", "w03", "w07"}}, []string{"w09"}, 3},
		{"restricted to none stored", store.ListOptions{Limit: 10, IDs: []string{"ghost"}}, []string{}, 0},
		{"empty restriction", store.ListOptions{Limit: 10, IDs: []string{}}, []string{}, 0},
	}
	for _, tt := range tests {
		items, total, err := s.JobList(ctx, tt.opts)
		if err != nil || total != tt.wantTotal || !reflect.DeepEqual(jobIDs(items), tt.want) || items == nil {
			t.Errorf("%s: JobList(%+v) = %#v, %d, %v; want %v, %d", tt.name, tt.opts, jobIDs(items), total, err, tt.want, tt.wantTotal)
		}
	}
	items, _, err := s.JobList(ctx, store.ListOptions{Limit: 1, Offset: 4})
	if want := job("w04", store.JobActive, true, created); err != nil || len(items) != 1 || jobString(&items[0]) != jobString(want) {
		t.Errorf("JobList item = %v, %v; want %s", items, err, jobString(want))
	}
}

func testJobsAlwaysOn(t *testing.T, s store.Store) {
	ctx := t.Context()
	if got, err := s.JobsAlwaysOn(ctx); err != nil || len(got) != 0 {
		t.Errorf("JobsAlwaysOn(empty store) = %v, %v; want none", jobIDs(got), err)
	}
	created := time.Now().Truncate(time.Millisecond)
	jobs := []*store.Job{
		job("on-b", store.JobActive, true, created),
		job("on-a", store.JobActive, true, created),
		job("off", store.JobActive, false, created),
		job("paused", store.JobPaused, true, created),
		job("done", store.JobDone, true, created),
		job("error", store.JobError, true, created),
		job("stopped", store.JobStopped, true, created),
	}
	for _, j := range jobs {
		if err := s.JobPut(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.JobsAlwaysOn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b store.Job) int { return strings.Compare(a.WorkflowID, b.WorkflowID) })
	if ids := jobIDs(got); !reflect.DeepEqual(ids, []string{"on-a", "on-b"}) {
		t.Fatalf("JobsAlwaysOn = %v; want [on-a on-b]", ids)
	}
	if jobString(&got[0]) != jobString(jobs[1]) {
		t.Errorf("JobsAlwaysOn[0] = %s; want %s", jobString(&got[0]), jobString(jobs[1]))
	}
	// Pausing a job takes it off the list.
	if err := s.JobPut(ctx, job("on-b", store.JobPaused, true, created)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobsAlwaysOn(ctx); err != nil || !reflect.DeepEqual(jobIDs(got), []string{"on-a"}) {
		t.Errorf("JobsAlwaysOn after a pause = %v, %v; want [on-a]", jobIDs(got), err)
	}
}

func testJobDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	created := time.Now().Truncate(time.Millisecond)
	for _, id := range []string{"keep", "gone", "wf-gone"} {
		if err := s.JobPut(ctx, job(id, store.JobActive, true, created)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"gone", "gone", "never"} { // deleting a job not stored is no error
		if err := s.JobDelete(ctx, id); err != nil {
			t.Errorf("JobDelete(%q) = %v; want nil", id, err)
		}
	}
	if got, err := s.JobGet(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("JobGet(deleted) = %s, %v; want ErrNotFound", jobString(got), err)
	}
	// Deleting a workflow deletes its job.
	for _, id := range []string{"keep", "wf-gone"} {
		if _, err := s.WorkflowPut(ctx, wf(id, id), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WorkflowDelete(ctx, "wf-gone"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobGet(ctx, "wf-gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("JobGet(deleted workflow) = %s, %v; want ErrNotFound", jobString(got), err)
	}
	if got, err := s.JobGet(ctx, "keep"); err != nil || jobString(got) != jobString(job("keep", store.JobActive, true, created)) {
		t.Errorf("JobGet(kept) = %s, %v", jobString(got), err)
	}
	items, total, err := s.JobList(ctx, store.ListOptions{Limit: 10})
	if err != nil || total != 1 || !reflect.DeepEqual(jobIDs(items), []string{"keep"}) {
		t.Errorf("JobList after deletes = %v, %d, %v; want [keep], 1", jobIDs(items), total, err)
	}
}
