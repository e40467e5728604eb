package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
	"github.com/svcrun/svc/internal/store/storetest"
)

func open(t *testing.T) store.Store {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkflowPut(t.Context(), &store.Workflow{ID: "w", Name: "W", Doc: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkflowPut(t.Context(), &store.Workflow{ID: "x", Name: "X", Doc: []byte(`{}`)}, nil); err != store.ErrClosed {
		t.Errorf("write after Close: %v; want ErrClosed", err)
	}
	s, err = sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w, err := s.WorkflowGet(t.Context(), "w"); err != nil || w.RowVersion != 1 {
		t.Errorf("after reopen: %v, %v", w, err)
	}
}
