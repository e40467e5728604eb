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
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// tokenTTL is how long a token record is trusted from the cache. Changes
// made through this server clear the cache at once; the TTL bounds how long
// a change made elsewhere (another server on the same database) takes.
const tokenTTL = 5 * time.Second

// tokenCache keeps token records by secret hash, loaded from the store on
// first use.
type tokenCache struct {
	store store.Store
	m     sync.Map // hash -> cachedToken
}

type cachedToken struct {
	t  *store.Token
	at time.Time
}

func (c *tokenCache) lookup(ctx context.Context, hash string, now time.Time) (*store.Token, error) {
	if v, ok := c.m.Load(hash); ok && now.Sub(v.(cachedToken).at) < tokenTTL {
		return v.(cachedToken).t, nil
	}
	t, err := c.store.TokenByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.m.Store(hash, cachedToken{t, now})
	return t, nil
}

// clear forgets every cached token: after a revocation or a grant change.
func (c *tokenCache) clear() { c.m.Clear() }

type principalKey struct{}

// principal returns the token a request was authenticated with.
func principal(r *http.Request) *store.Token {
	t, _ := r.Context().Value(principalKey{}).(*store.Token)
	return t
}

// authed wraps a handler with bearer authentication and a scope check:
// 401 for a missing, unknown, expired or revoked token, 403 for a missing
// scope (admin satisfies every scope) with denied as the message, or
// "<scope> scope required" when denied is empty.
func (s *Server) authed(scope, denied string, h handler) handler {
	if denied == "" {
		denied = scope + " scope required"
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		secret, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		now := time.Now()
		t, err := s.tokens.lookup(r.Context(), HashToken(secret), now)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if err != nil {
			return err
		}
		if t.RevokedAt != nil || (t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)) {
			return errorf(http.StatusUnauthorized, msgInvalidToken)
		}
		if !hasScope(t, scope) {
			return errorf(http.StatusForbidden, "%s", denied)
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, t)))
	}
}

func hasScope(t *store.Token, scope string) bool {
	return slices.Contains(t.Scopes, scope) || slices.Contains(t.Scopes, ScopeAdmin)
}

// isAdmin reports whether the request's token has admin scope.
func isAdmin(r *http.Request) bool {
	t := principal(r)
	return t != nil && slices.Contains(t.Scopes, ScopeAdmin)
}

// Per-token workflow ACL (spec/server.md section 5). A token with grants is
// confined to them, unless it has admin scope.

// restricted reports whether a token is confined to its grants.
func restricted(t *store.Token) bool {
	return t != nil && len(t.WorkflowIDs) > 0 && !slices.Contains(t.Scopes, ScopeAdmin)
}

// grants returns the workflow ids a request's token is confined to, or
// nil when it is unrestricted: the filter of the ACL-filtered lists.
func grants(r *http.Request) []string {
	if t := principal(r); restricted(t) {
		return t.WorkflowIDs
	}
	return nil
}

// permitWorkflow is the ACL pre-check of the workflow-bound routes: it
// depends only on the grants, never on whether the workflow exists.
func permitWorkflow(r *http.Request, id string) error {
	if t := principal(r); restricted(t) && !slices.Contains(t.WorkflowIDs, id) {
		return errorf(http.StatusForbidden, msgACLDenied)
	}
	return nil
}

// permitServerWide refuses restricted tokens on server-wide routes.
func permitServerWide(r *http.Request) error {
	if restricted(principal(r)) {
		return errorf(http.StatusForbidden, msgServerWide)
	}
	return nil
}
