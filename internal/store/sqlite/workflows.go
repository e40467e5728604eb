package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svcrun/svc/internal/store"
)

// WorkflowList returns a page of workflows ordered by id, and how many there
// are in all (within opts.IDs when set).
func (s *Store) WorkflowList(ctx context.Context, opts store.ListOptions) ([]store.WorkflowSummary, int, error) {
	where, args := "", []any{}
	if opts.IDs != nil {
		ids, _ := json.Marshal(opts.IDs)
		where, args = "WHERE id IN (SELECT value FROM json_each(?))", append(args, string(ids))
	}
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM workflows "+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list workflows: %w", err)
	}
	rows, err := s.r.QueryContext(ctx,
		"SELECT id, name, updated_at, tags, collection_id FROM workflows "+where+" ORDER BY id LIMIT ? OFFSET ?",
		append(args, opts.Limit, opts.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list workflows: %w", err)
	}
	defer rows.Close()
	items := make([]store.WorkflowSummary, 0, min(opts.Limit, 512))
	for rows.Next() {
		var (
			w       store.WorkflowSummary
			updated int64
			tags    string
			coll    sql.NullString
		)
		if err := rows.Scan(&w.ID, &w.Name, &updated, &tags, &coll); err != nil {
			return nil, 0, fmt.Errorf("list workflows: %w", err)
		}
		w.UpdatedAt = fromMs(updated)
		w.Tags = decodeTags(tags)
		if coll.Valid {
			w.CollectionID = &coll.String
		}
		items = append(items, w)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list workflows: %w", err)
	}
	return items, total, nil
}

func decodeTags(s string) []string {
	tags := []string{}
	_ = json.Unmarshal([]byte(s), &tags)
	return tags
}

// WorkflowGet returns a workflow, or store.ErrNotFound.
func (s *Store) WorkflowGet(ctx context.Context, id string) (*store.Workflow, error) {
	var (
		w                store.Workflow
		tags, doc        string
		coll             sql.NullString
		created, updated int64
	)
	err := s.r.QueryRowContext(ctx,
		"SELECT id, name, tags, collection_id, doc, row_version, created_at, updated_at FROM workflows WHERE id = ?", id).
		Scan(&w.ID, &w.Name, &tags, &coll, &doc, &w.RowVersion, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get workflow: %w", err)
	}
	w.Tags = decodeTags(tags)
	if coll.Valid {
		w.CollectionID = &coll.String
	}
	w.Doc = []byte(doc)
	w.CreatedAt, w.UpdatedAt = fromMs(created), fromMs(updated)
	return &w, nil
}

// WorkflowPut creates or replaces a workflow.
func (s *Store) WorkflowPut(ctx context.Context, w *store.Workflow, ifMatch *int64) (int64, error) {
	tags := w.Tags
	if tags == nil {
		tags = []string{}
	}
	tagsJSON, err := json.Marshal(tags)
	if err != nil {
		return 0, fmt.Errorf("put workflow: %w", err)
	}
	now := ms(time.Now())
	var version int64
	err = s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		var current int64
		err := tx.QueryRow(ctx, "SELECT row_version FROM workflows WHERE id = ?", w.ID).Scan(&current)
		exists := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if ifMatch != nil {
			if !exists {
				return store.ErrPrecondition
			}
			if current != *ifMatch {
				return &store.VersionConflictError{Current: current}
			}
		}
		if exists {
			version = current + 1
			_, err = tx.Exec(ctx,
				"UPDATE workflows SET name = ?, tags = ?, collection_id = ?, doc = ?, row_version = ?, updated_at = ? WHERE id = ?",
				w.Name, string(tagsJSON), w.CollectionID, string(w.Doc), version, now, w.ID)
			return err
		}
		version = 1
		_, err = tx.Exec(ctx,
			"INSERT INTO workflows (id, name, tags, collection_id, doc, row_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			w.ID, w.Name, string(tagsJSON), w.CollectionID, string(w.Doc), version, now, now)
		return err
	})
	if err != nil {
		var conflict *store.VersionConflictError
		if errors.Is(err, store.ErrPrecondition) || errors.As(err, &conflict) || errors.Is(err, store.ErrClosed) {
			return 0, err
		}
		return 0, fmt.Errorf("put workflow: %w", err)
	}
	return version, nil
}

// WorkflowDelete removes a workflow, its runs, variables, job and reports.
func (s *Store) WorkflowDelete(ctx context.Context, id string) error {
	err := s.submitMulti(ctx, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx, "DELETE FROM workflows WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrNotFound
		}
		for _, q := range []string{
			"DELETE FROM runs WHERE workflow_id = ?",
			"DELETE FROM variables WHERE workflow_id = ?",
			"DELETE FROM jobs WHERE workflow_id = ?",
			"DELETE FROM perf_reports WHERE workflow_id = ?",
		} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("delete workflow: %w", err)
	}
	return err
}
