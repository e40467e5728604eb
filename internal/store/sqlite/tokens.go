package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/value"
)

func decodeValue(raw string) (any, error) { return value.DecodeString(raw) }

// TokenInsert stores a token and its grants unless its secret hash is
// stored already; an id taken by another token is store.ErrExists.
func (s *Store) TokenInsert(ctx context.Context, t *store.Token) (bool, error) {
	scopes, err := json.Marshal(t.Scopes)
	if err != nil {
		return false, fmt.Errorf("insert token: %w", err)
	}
	var inserted bool
	err = s.submitMulti(ctx, func(ctx context.Context, tx wtx) error {
		var hashTaken, idTaken bool
		err := tx.QueryRow(ctx,
			"SELECT EXISTS (SELECT 1 FROM tokens WHERE secret_hash = ?), EXISTS (SELECT 1 FROM tokens WHERE id = ?)",
			t.SecretHash, t.ID).Scan(&hashTaken, &idTaken)
		switch {
		case err != nil:
			return err
		case hashTaken:
			return nil
		case idTaken:
			return store.ErrExists
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tokens (id, label, scopes, secret_hash, created_at, revoked_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Label, string(scopes), t.SecretHash, ms(t.CreatedAt), nullMs(t.RevokedAt), nullMs(t.ExpiresAt)); err != nil {
			return err
		}
		for _, wf := range t.WorkflowIDs {
			if _, err := tx.Exec(ctx, insertGrant, t.ID, wf); err != nil {
				return err
			}
		}
		inserted = true
		return nil
	})
	if err != nil {
		return false, wrapErr("insert token", err)
	}
	return inserted, nil
}

const insertGrant = "INSERT INTO token_grants (token_id, workflow_id) VALUES (?, ?) ON CONFLICT DO NOTHING"

// tokenSelect reads a token with its grants in one statement, so that the
// two come from one snapshot.
const tokenSelect = `SELECT id, label, scopes, secret_hash, created_at, revoked_at, expires_at,
	(SELECT json_group_array(workflow_id) FROM token_grants WHERE token_id = tokens.id)
	FROM tokens `

func scanToken(sc interface{ Scan(...any) error }) (*store.Token, error) {
	var (
		t                  store.Token
		scopes, grants     string
		created            int64
		revoked, expiresAt sql.NullInt64
	)
	if err := sc.Scan(&t.ID, &t.Label, &scopes, &t.SecretHash, &created, &revoked, &expiresAt, &grants); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	if err := json.Unmarshal([]byte(grants), &t.WorkflowIDs); err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	// No grants is nil, so that WorkflowIDs passed on as
	// store.ListOptions.IDs restricts nothing.
	if len(t.WorkflowIDs) == 0 {
		t.WorkflowIDs = nil
	}
	slices.Sort(t.WorkflowIDs)
	t.CreatedAt = fromMs(created)
	t.RevokedAt, t.ExpiresAt = msPtr(revoked), msPtr(expiresAt)
	return &t, nil
}

// TokenByHash returns the token with a secret hash, or store.ErrNotFound.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*store.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, tokenSelect+"WHERE secret_hash = ?", hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get token: %w", err)
	}
	return t, nil
}

// TokenGet returns a token by id, or store.ErrNotFound.
func (s *Store) TokenGet(ctx context.Context, id string) (*store.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, tokenSelect+"WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get token: %w", err)
	}
	return t, nil
}

// TokenList lists every token, oldest first.
func (s *Store) TokenList(ctx context.Context) ([]store.Token, error) {
	rows, err := s.r.QueryContext(ctx, tokenSelect+"ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	tokens := []store.Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		tokens = append(tokens, *t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return tokens, nil
}

// TokenRevoke marks a token revoked; one revoked already keeps its time.
func (s *Store) TokenRevoke(ctx context.Context, id string, at time.Time) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx, "UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", ms(at), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		return nil
	})
	return wrapErr("revoke token", err)
}

// GrantAdd grants a live token access to a workflow.
func (s *Store) GrantAdd(ctx context.Context, tokenID, workflowID string) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		var revoked sql.NullInt64
		err := tx.QueryRow(ctx, "SELECT revoked_at FROM tokens WHERE id = ?", tokenID).Scan(&revoked)
		if errors.Is(err, sql.ErrNoRows) || err == nil && revoked.Valid {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertGrant, tokenID, workflowID)
		return err
	})
	return wrapErr("add grant", err)
}

// GrantRemove removes a grant unless it is the token's only one. The
// check and the delete run in one write, so no other write comes between.
func (s *Store) GrantRemove(ctx context.Context, tokenID, workflowID string) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		var exists bool
		var held, total int
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tokens WHERE id = ?),
			COUNT(*) FILTER (WHERE workflow_id = ?), COUNT(*)
			FROM token_grants WHERE token_id = ?`, tokenID, workflowID, tokenID).Scan(&exists, &held, &total)
		switch {
		case err != nil:
			return err
		case !exists:
			return store.ErrNotFound
		case held == 0:
			return nil
		case total == 1:
			return store.ErrLastGrant
		}
		_, err = tx.Exec(ctx, "DELETE FROM token_grants WHERE token_id = ? AND workflow_id = ?", tokenID, workflowID)
		return err
	})
	return wrapErr("remove grant", err)
}
