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

const jobColumns = `workflow_id, workflow_name, trigger_kind, status, always_on, run_count,
	last_run_at, next_run_at, created_at, last_error, port_override`

func scanJob(sc interface{ Scan(...any) error }) (*store.Job, error) {
	var (
		j                store.Job
		trigger          string
		lastRun, nextRun sql.NullInt64
		created          int64
		lastError        sql.NullString
		port             sql.NullInt64
	)
	if err := sc.Scan(&j.WorkflowID, &j.WorkflowName, &trigger, &j.Status, &j.AlwaysOn, &j.RunCount,
		&lastRun, &nextRun, &created, &lastError, &port); err != nil {
		return nil, err
	}
	j.Trigger = []byte(trigger)
	j.LastRunAt, j.NextRunAt = msPtr(lastRun), msPtr(nextRun)
	j.CreatedAt = fromMs(created)
	j.LastError = stringPtr(lastError)
	if port.Valid {
		p := int(port.Int64)
		j.PortOverride = &p
	}
	return &j, nil
}

// JobPut creates or replaces a workflow's job. A zero CreatedAt is taken
// as now; a replace keeps the stored creation time and the lease.
func (s *Store) JobPut(ctx context.Context, j *store.Job) error {
	created := j.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	args := []any{j.WorkflowID, j.WorkflowName, string(j.Trigger), j.Status, j.AlwaysOn, j.RunCount,
		nullMs(j.LastRunAt), nullMs(j.NextRunAt), ms(created), j.LastError, j.PortOverride}
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		_, err := tx.Exec(ctx, `INSERT INTO jobs (`+jobColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workflow_id) DO UPDATE SET workflow_name = excluded.workflow_name,
				trigger_kind = excluded.trigger_kind, status = excluded.status, always_on = excluded.always_on,
				run_count = excluded.run_count, last_run_at = excluded.last_run_at, next_run_at = excluded.next_run_at,
				last_error = excluded.last_error, port_override = excluded.port_override`,
			args...)
		return err
	})
	return wrapErr("put job", err)
}

// JobGet returns a workflow's job, or store.ErrNotFound.
func (s *Store) JobGet(ctx context.Context, workflowID string) (*store.Job, error) {
	j, err := scanJob(s.r.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE workflow_id = ?", workflowID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get job: %w", err)
	}
	return j, nil
}

// JobList returns a page of jobs ordered by workflow id, and how many
// there are in all (within opts.IDs when set).
func (s *Store) JobList(ctx context.Context, opts store.ListOptions) ([]store.Job, int, error) {
	where, args := "", []any{}
	if opts.IDs != nil {
		ids, _ := json.Marshal(opts.IDs)
		where, args = "WHERE workflow_id IN (SELECT value FROM json_each(?))", append(args, string(ids))
	}
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs "+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	items, err := s.jobs(ctx, "SELECT "+jobColumns+" FROM jobs "+where+" ORDER BY workflow_id LIMIT ? OFFSET ?",
		append(args, opts.Limit, opts.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	return items, total, nil
}

// JobsAlwaysOn lists the active jobs marked always on, ordered by
// workflow id.
func (s *Store) JobsAlwaysOn(ctx context.Context) ([]store.Job, error) {
	items, err := s.jobs(ctx, "SELECT "+jobColumns+" FROM jobs WHERE always_on = 1 AND status = ? ORDER BY workflow_id",
		store.JobActive)
	if err != nil {
		return nil, fmt.Errorf("list always-on jobs: %w", err)
	}
	return items, nil
}

// jobs reads the jobs a query selects; none is an empty list.
func (s *Store) jobs(ctx context.Context, query string, args ...any) ([]store.Job, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []store.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, *j)
	}
	return items, rows.Err()
}

// JobDelete removes a workflow's job; a job not stored is no error.
func (s *Store) JobDelete(ctx context.Context, workflowID string) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		_, err := tx.Exec(ctx, "DELETE FROM jobs WHERE workflow_id = ?", workflowID)
		return err
	})
	return wrapErr("delete job", err)
}
