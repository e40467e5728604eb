package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/value"
)

func decodeValue(raw string) (any, error) { return value.DecodeString(raw) }

// TokenInsert stores a token unless its secret hash is stored already.
func (s *Store) TokenInsert(ctx context.Context, t *store.Token) (bool, error) {
	scopes, err := json.Marshal(t.Scopes)
	if err != nil {
		return false, fmt.Errorf("insert token: %w", err)
	}
	var inserted bool
	err = s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx, `INSERT INTO tokens (id, label, scopes, secret_hash, created_at, revoked_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (secret_hash) DO NOTHING`,
			t.ID, t.Label, string(scopes), t.SecretHash, ms(t.CreatedAt), nullMs(t.RevokedAt), nullMs(t.ExpiresAt))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		inserted = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("insert token: %w", err)
	}
	return inserted, nil
}

// TokenByHash returns the token with a secret hash, or store.ErrNotFound.
func (s *Store) TokenByHash(ctx context.Context, hash string) (*store.Token, error) {
	var (
		t                  store.Token
		scopes             string
		created            int64
		revoked, expiresAt sql.NullInt64
	)
	err := s.r.QueryRowContext(ctx,
		"SELECT id, label, scopes, secret_hash, created_at, revoked_at, expires_at FROM tokens WHERE secret_hash = ?", hash).
		Scan(&t.ID, &t.Label, &scopes, &t.SecretHash, &created, &revoked, &expiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get token: %w", err)
	}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return nil, fmt.Errorf("get token: scopes: %w", err)
	}
	t.CreatedAt = fromMs(created)
	t.RevokedAt, t.ExpiresAt = msPtr(revoked), msPtr(expiresAt)
	return &t, nil
}
