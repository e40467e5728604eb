package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/svcrun/svc/internal/store"
)

const credentialColumns = "id, name, cred_type, ciphertext, provider, model, base_url, created_at, updated_at"

func scanCredential(sc interface{ Scan(...any) error }) (*store.Credential, error) {
	var (
		c                        store.Credential
		provider, model, baseURL sql.NullString
		created, updated         int64
	)
	if err := sc.Scan(&c.ID, &c.Name, &c.Type, &c.Ciphertext, &provider, &model, &baseURL, &created, &updated); err != nil {
		return nil, err
	}
	c.Provider, c.Model, c.BaseURL = stringPtr(provider), stringPtr(model), stringPtr(baseURL)
	c.CreatedAt, c.UpdatedAt = fromMs(created), fromMs(updated)
	return &c, nil
}

func stringPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// CredentialList lists every credential, ordered by id.
func (s *Store) CredentialList(ctx context.Context) ([]store.Credential, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+credentialColumns+" FROM credentials ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	defer rows.Close()
	creds := []store.Credential{}
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		creds = append(creds, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return creds, nil
}

// CredentialGet returns a credential, or store.ErrNotFound.
func (s *Store) CredentialGet(ctx context.Context, id string) (*store.Credential, error) {
	c, err := scanCredential(s.r.QueryRowContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get credential: %w", err)
	}
	return c, nil
}

// CredentialPut creates or replaces a credential. Zero times are taken as
// now; an update keeps the stored creation time and, for a nil
// Ciphertext, the stored secret.
func (s *Store) CredentialPut(ctx context.Context, c *store.Credential, update bool) error {
	now := time.Now()
	created, updated := c.CreatedAt, c.UpdatedAt
	if created.IsZero() {
		created = now
	}
	if updated.IsZero() {
		updated = now
	}
	var ciphertext any // NULL keeps the stored secret on update
	if c.Ciphertext != nil {
		ciphertext = c.Ciphertext
	} else if !update {
		return fmt.Errorf("create credential %q: no ciphertext", c.ID)
	}
	step, missing := "create credential", store.ErrExists
	query := `INSERT INTO credentials (id, name, cred_type, ciphertext, provider, model, base_url, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	args := []any{c.ID, c.Name, c.Type, ciphertext, c.Provider, c.Model, c.BaseURL, ms(created), ms(updated)}
	if update {
		step, missing = "update credential", store.ErrNotFound
		query = `UPDATE credentials SET name = ?, cred_type = ?, ciphertext = COALESCE(?, ciphertext),
			provider = ?, model = ?, base_url = ?, updated_at = ? WHERE id = ?`
		args = []any{c.Name, c.Type, ciphertext, c.Provider, c.Model, c.BaseURL, ms(updated), c.ID}
	}
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return missing
		}
		return nil
	})
	return wrapErr(step, err)
}

// CredentialDelete removes a credential, or reports store.ErrNotFound.
func (s *Store) CredentialDelete(ctx context.Context, id string) error {
	err := s.submit(ctx, true, func(ctx context.Context, tx wtx) error {
		res, err := tx.Exec(ctx, "DELETE FROM credentials WHERE id = ?", id)
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
	return wrapErr("delete credential", err)
}

// CredentialCount counts the saved credentials.
func (s *Store) CredentialCount(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM credentials").Scan(&n); err != nil {
		return 0, fmt.Errorf("count credentials: %w", err)
	}
	return n, nil
}
