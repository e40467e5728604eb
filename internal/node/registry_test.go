package node_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/svcrun/svc/internal/node"
)

func newRunner(node.Config) (node.Runner, error) {
	return node.RunnerFunc(func(context.Context, node.Env) (node.Result, error) { return node.Result{}, nil }), nil
}

// testSpec is a complete spec, fit for the default registry too.
func testSpec(id string) *node.Spec {
	return &node.Spec{
		TypeID:      id,
		DisplayName: "Test " + id,
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "a node type made by a test",
		Fields:      []node.Field{{Name: "mode", Kind: node.KindEnum, Enum: []string{"a", "b"}, Default: "a"}},
		Inputs:      []node.Port{node.InPort},
		Outputs:     []node.Port{node.OutPort},
		Enabled:     true,
		New:         newRunner,
	}
}

func TestRegistryAdd(t *testing.T) {
	t.Parallel()
	r := node.NewRegistry()
	if err := r.Add(testSpec("alpha")); err != nil {
		t.Fatalf("Add(alpha) error: %v", err)
	}
	if err := r.Add(testSpec("alpha")); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("Add(alpha) twice error = %v; want one naming alpha", err)
	}
	if r.Len() != 1 {
		t.Errorf("Len() = %d; want 1", r.Len())
	}
	s, ok := r.Lookup("alpha")
	if !ok || s.TypeID != "alpha" {
		t.Errorf("Lookup(alpha) = %v, %v; want the spec", s, ok)
	}
	if _, ok := r.Lookup("beta"); ok {
		t.Errorf("Lookup(beta) found a spec; want none")
	}
}

func TestRegistryAddRejectsIncomplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*node.Spec)
	}{
		{"no type id", func(s *node.Spec) { s.TypeID = "" }},
		{"no constructor", func(s *node.Spec) { s.New = nil }},
		{"empty field name", func(s *node.Spec) { s.Fields = append(s.Fields, node.Field{Kind: node.KindText}) }},
		{"duplicate field", func(s *node.Spec) { s.Fields = append(s.Fields, node.Field{Name: "mode", Kind: node.KindText}) }},
		{"enum without values", func(s *node.Spec) { s.Fields = []node.Field{{Name: "e", Kind: node.KindEnum}} }},
		{"trigger with input", func(s *node.Spec) { s.Trigger = true }},
	}
	for _, tt := range tests {
		s := testSpec("x")
		tt.edit(s)
		r := node.NewRegistry()
		if err := r.Add(s); err == nil {
			t.Errorf("Add(%s) = nil; want an error", tt.name)
		}
		if r.Len() != 0 {
			t.Errorf("Add(%s) left %d specs; want 0", tt.name, r.Len())
		}
	}
}

// TestRegisterPanics registers in the default registry, so its spec is a
// complete one that the catalog checks of schema_test.go accept.
func TestRegisterPanics(t *testing.T) {
	t.Parallel()
	const id = "test_register_duplicate"
	node.Register(testSpec(id))
	if _, ok := node.Default().Lookup(id); !ok {
		t.Fatalf("Default().Lookup(%s) found nothing after Register", id)
	}
	for _, s := range []*node.Spec{testSpec(id), testSpec("")} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", s.TypeID)
				}
			}()
			node.Register(s)
		}()
	}
}

func TestRegistryClone(t *testing.T) {
	t.Parallel()
	r := node.NewRegistry()
	for _, id := range []string{"a", "b"} {
		if err := r.Add(testSpec(id)); err != nil {
			t.Fatalf("Add(%s) error: %v", id, err)
		}
	}
	_ = r.Specs() // fill any cache before cloning
	c := r.Clone()
	if err := c.Add(testSpec("plugin")); err != nil {
		t.Fatalf("clone Add(plugin) error: %v", err)
	}
	if _, ok := r.Lookup("plugin"); ok {
		t.Errorf("original Lookup(plugin) found the clone's spec")
	}
	if r.Len() != 2 || c.Len() != 3 {
		t.Errorf("Len() original %d clone %d; want 2 and 3", r.Len(), c.Len())
	}
	if got := ids(r.Specs()); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("original Specs() = %v; want [a b]", got)
	}
	if got := ids(c.Specs()); !slices.Equal(got, []string{"a", "b", "plugin"}) {
		t.Errorf("clone Specs() = %v; want [a b plugin]", got)
	}
	// The original can change too without the clone seeing it.
	if err := r.Add(testSpec("late")); err != nil {
		t.Fatalf("Add(late) error: %v", err)
	}
	if _, ok := c.Lookup("late"); ok {
		t.Errorf("clone Lookup(late) found the original's later spec")
	}
}

func TestRegistrySetEnabled(t *testing.T) {
	t.Parallel()
	r := node.NewRegistry()
	orig := testSpec("shell")
	if err := r.Add(orig); err != nil {
		t.Fatalf("Add error: %v", err)
	}
	c := r.Clone()
	if !c.SetEnabled("shell", false) {
		t.Fatalf("SetEnabled(shell) = false; want true")
	}
	if c.SetEnabled("nope", true) {
		t.Errorf("SetEnabled(nope) = true; want false")
	}
	got, _ := c.Lookup("shell")
	if got.Enabled {
		t.Errorf("clone spec Enabled = true after SetEnabled(false)")
	}
	if !orig.Enabled {
		t.Errorf("SetEnabled changed the registered spec value itself")
	}
	if s, _ := r.Lookup("shell"); !s.Enabled {
		t.Errorf("original registry spec Enabled = false; want true")
	}
	if s := c.Specs()[0]; s.Enabled {
		t.Errorf("clone Specs()[0].Enabled = true; want the switched-off copy")
	}
	if s := r.Specs()[0]; !s.Enabled {
		t.Errorf("original Specs()[0].Enabled = false; want true")
	}
	// Switching back on also copies.
	if !c.SetEnabled("shell", true) {
		t.Fatalf("SetEnabled(shell, true) = false")
	}
	if s, _ := c.Lookup("shell"); !s.Enabled || s == orig {
		t.Errorf("after SetEnabled(true) clone spec = %p Enabled %v; want an enabled copy", s, s.Enabled)
	}
}

func TestRegistrySpecsSorted(t *testing.T) {
	t.Parallel()
	r := node.NewRegistry()
	for _, id := range []string{"zeta", "alpha", "mid", "beta_2", "beta"} {
		if err := r.Add(testSpec(id)); err != nil {
			t.Fatalf("Add(%s) error: %v", id, err)
		}
	}
	if got, want := ids(r.Specs()), []string{"alpha", "beta", "beta_2", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Specs() = %v; want %v", got, want)
	}
	if err := r.Add(testSpec("gamma")); err != nil {
		t.Fatalf("Add(gamma) error: %v", err)
	}
	if got, want := ids(r.Specs()), []string{"alpha", "beta", "beta_2", "gamma", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Specs() after Add = %v; want %v", got, want)
	}
}

// TestRegistryConcurrentReads holds the registry to its promise of safe
// concurrent reads (run with -race): a server lists the catalog from many
// requests at once.
func TestRegistryConcurrentReads(t *testing.T) {
	t.Parallel()
	r := node.NewRegistry()
	for _, id := range []string{"c", "a", "b"} {
		if err := r.Add(testSpec(id)); err != nil {
			t.Fatalf("Add(%s) error: %v", id, err)
		}
	}
	for _, reg := range []*node.Registry{r.Clone(), node.Default()} {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				_ = reg.Specs()
				reg.Lookup("a")
				_ = reg.Len()
			})
		}
		wg.Wait()
	}
}

func ids(specs []*node.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.TypeID
	}
	return out
}
