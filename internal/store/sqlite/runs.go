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

// RunStart queues the running row of a run without waiting for it.
func (s *Store) RunStart(ctx context.Context, r *store.Run) error {
	id, wf, trigger, started := r.ID, r.WorkflowID, r.Trigger, ms(r.StartedAt)
	return s.submit(ctx, false, func(ctx context.Context, tx wtx) error {
		_, err := tx.Exec(ctx,
			"INSERT INTO runs (id, workflow_id, status, trigger, started_at) VALUES (?, ?, 'running', ?, ?) ON CONFLICT (id) DO NOTHING",
			id, wf, trigger, started)
		return err
	})
}

// RunFinish records a run's outcome, whether or not RunStart was called.
func (s *Store) RunFinish(ctx context.Context, r *store.Run) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		_, err := tx.Exec(ctx, `INSERT INTO runs (id, workflow_id, status, trigger, started_at, finished_at, error_code, error, result)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at,
				error_code = excluded.error_code, error = excluded.error, result = excluded.result`,
			r.ID, r.WorkflowID, r.Status, r.Trigger, ms(r.StartedAt), ms(r.FinishedAt),
			nullString(r.ErrorCode), nullString(r.Error), r.Result)
		return err
	})
	if err != nil && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("finish run: %w", err)
	}
	return err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

const runColumns = "id, workflow_id, status, trigger, started_at, finished_at, error_code, error, result"

func scanRun(sc interface{ Scan(...any) error }) (*store.Run, error) {
	var (
		r                     store.Run
		started               int64
		finished              sql.NullInt64
		code, msg, resultJSON sql.NullString
	)
	if err := sc.Scan(&r.ID, &r.WorkflowID, &r.Status, &r.Trigger, &started, &finished, &code, &msg, &resultJSON); err != nil {
		return nil, err
	}
	r.StartedAt = fromMs(started)
	if finished.Valid {
		r.FinishedAt = fromMs(finished.Int64)
	}
	r.ErrorCode, r.Error = code.String, msg.String
	if resultJSON.Valid {
		r.Result = []byte(resultJSON.String)
	}
	return &r, nil
}

// RunGet returns a run, or store.ErrNotFound.
func (s *Store) RunGet(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get run: %w", err)
	}
	return r, nil
}

// RunList lists a workflow's runs, newest first.
func (s *Store) RunList(ctx context.Context, workflowID string, opts store.ListOptions) ([]store.Run, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+runColumns+
		" FROM runs WHERE workflow_id = ? ORDER BY started_at DESC, id LIMIT ? OFFSET ?", workflowID, opts.Limit, opts.Offset)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var runs []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		runs = append(runs, *r)
	}
	return runs, rows.Err()
}

// RunFailUnfinished fails the runs a stopped server left running.
func (s *Store) RunFailUnfinished(ctx context.Context, reason string) (int, error) {
	var n int64
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx,
			"UPDATE runs SET status = 'failed', error_code = 'SERVER_STOPPED', error = ?, finished_at = ? WHERE status = 'running'",
			reason, ms(time.Now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fail unfinished runs: %w", err)
	}
	return int(n), nil
}

// VariableGet reads a persistent variable.
func (s *Store) VariableGet(ctx context.Context, workflowID, key string) (any, bool, error) {
	var raw string
	err := s.r.QueryRowContext(ctx, "SELECT value FROM variables WHERE workflow_id = ? AND key = ?", workflowID, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get variable: %w", err)
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, false, fmt.Errorf("get variable: %w", err)
	}
	return v, true, nil
}

// VariableSet writes a persistent variable.
func (s *Store) VariableSet(ctx context.Context, workflowID, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("set variable: %w", err)
	}
	now := ms(time.Now())
	err = s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		_, err := tx.Exec(ctx, `INSERT INTO variables (workflow_id, key, value, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (workflow_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			workflowID, key, string(raw), now)
		return err
	})
	if err != nil && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("set variable: %w", err)
	}
	return err
}
