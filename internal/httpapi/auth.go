package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/store"
)

// Scopes.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
	ScopeAdmin = "admin"
)

// HashToken is how a token secret is stored: the hex SHA-256 of the secret.
// Tokens are long random strings, so a fast hash is enough.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != "" && !strings.ContainsAny(token, " \t")
}

// tokenCache keeps token records by secret hash, loaded from the store on
// first use. Revocation (a later route) drops an entry.
type tokenCache struct {
	store store.Store
	m     sync.Map // hash -> *store.Token
}

func (c *tokenCache) lookup(ctx context.Context, hash string) (*store.Token, error) {
	if t, ok := c.m.Load(hash); ok {
		return t.(*store.Token), nil
	}
	t, err := c.store.TokenByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.m.Store(hash, t)
	return t, nil
}

type principalKey struct{}

// principal returns the token a request was authenticated with.
func principal(r *http.Request) *store.Token {
	t, _ := r.Context().Value(principalKey{}).(*store.Token)
	return t
}

// authed wraps a handler with bearer authentication and a scope check:
// 401 for a missing, unknown, expired or revoked token, 403 for a missing
// scope (admin satisfies every scope).
func (s *Server) authed(scope string, h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		secret, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		t, err := s.tokens.lookup(r.Context(), HashToken(secret))
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if err != nil {
			return err
		}
		if t.RevokedAt != nil || (t.ExpiresAt != nil && !time.Now().Before(*t.ExpiresAt)) {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if !slices.Contains(t.Scopes, scope) && !slices.Contains(t.Scopes, ScopeAdmin) {
			return errorf(http.StatusForbidden, "%s scope required", scope)
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, t)))
	}
}
