package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svcrun/svc/internal/store"
)

// Limits of token creation (spec/server.md section 8).
const (
	MaxLabelLength    = 256
	MaxGrants         = 500
	MaxWorkflowIDSize = 256
)

// Notes of the token routes.
const (
	noteSaveToken    = "Save this token now: it is returned only once and cannot be shown again."
	noteUnrestricted = "This token has no workflow grants: it is unrestricted."
	noteRestricted   = "This token can reach only the workflows listed."
	noteGranted      = "Granted. A token with grants can reach only the workflows it is granted."
)

// lastDate is the latest expiry a token may have.
var lastDate = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// NewToken returns a new token id and secret.
func NewToken() (id, secret string) {
	var b [40]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:8]), "svc_" + base64.RawURLEncoding.EncodeToString(b[8:])
}

// tokenRecord is the JSON form of a token (never its secret).
type tokenRecord struct {
	TokenID     string     `json:"token_id"`
	Label       string     `json:"label"`
	Scopes      []string   `json:"scopes"`
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	WorkflowIDs []string   `json:"workflow_ids"`
}

func recordOf(t *store.Token) tokenRecord {
	return tokenRecord{TokenID: t.ID, Label: t.Label, Scopes: t.Scopes, CreatedAt: t.CreatedAt.UTC(),
		RevokedAt: utc(t.RevokedAt), ExpiresAt: utc(t.ExpiresAt), WorkflowIDs: orEmpty(t.WorkflowIDs)}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	toks, err := s.store.TokenList(r.Context())
	if err != nil {
		return err
	}
	out := make([]tokenRecord, len(toks))
	for i := range toks {
		out[i] = recordOf(&toks[i])
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// tokenRequest is the body of POST /api/tokens.
type tokenRequest struct {
	Label         *string      `json:"label"`
	Scopes        *[]string    `json:"scopes"`
	ExpiresInSecs *json.Number `json:"expires_in_secs"`
	WorkflowIDs   *[]string    `json:"workflow_ids"`
}

// tokenSpec is a checked tokenRequest.
type tokenSpec struct {
	label       string
	scopes      []string
	expiresIn   *uint64
	workflowIDs []string
}

// check applies the field rules of token creation at time now.
func (req *tokenRequest) check(now time.Time) (*tokenSpec, error) {
	sp := &tokenSpec{scopes: []string{ScopeRead, ScopeWrite}, workflowIDs: []string{}}
	if req.Label == nil || strings.TrimSpace(*req.Label) == "" {
		return nil, errorf(http.StatusBadRequest, "label: is required and must not be blank")
	}
	if utf8.RuneCountInString(*req.Label) > MaxLabelLength {
		return nil, errorf(http.StatusBadRequest, "label: must be at most %d characters", MaxLabelLength)
	}
	sp.label = *req.Label
	if req.Scopes != nil {
		if len(*req.Scopes) == 0 {
			return nil, errorf(http.StatusBadRequest, "scopes: must not be empty")
		}
		sp.scopes = nil
		for _, sc := range *req.Scopes {
			if sc != ScopeRead && sc != ScopeWrite && sc != ScopeAdmin {
				return nil, errorf(http.StatusBadRequest, "scopes: %q is not one of read, write, admin", sc)
			}
			if !slices.Contains(sp.scopes, sc) {
				sp.scopes = append(sp.scopes, sc)
			}
		}
	}
	if req.ExpiresInSecs != nil {
		n, err := strconv.ParseUint(req.ExpiresInSecs.String(), 10, 64)
		switch {
		case err != nil:
			return nil, errorf(http.StatusBadRequest, "expires_in_secs: must be a whole number of seconds")
		case n == 0:
			return nil, errorf(http.StatusBadRequest, "expires_in_secs: must not be 0 (leave it out for a token that does not expire)")
		case n > uint64(lastDate.Sub(now)/time.Second):
			return nil, errorf(http.StatusBadRequest, "expires_in_secs: is too large: the expiry would be after the year 9999")
		}
		sp.expiresIn = &n
	}
	if req.WorkflowIDs != nil {
		ids := *req.WorkflowIDs
		if len(ids) > MaxGrants {
			return nil, errorf(http.StatusBadRequest, "workflow_ids: at most %d entries", MaxGrants)
		}
		for i, id := range ids {
			if err := checkWorkflowID(fmt.Sprintf("workflow_ids[%d]", i), id); err != nil {
				return nil, err
			}
			if !slices.Contains(sp.workflowIDs, id) {
				sp.workflowIDs = append(sp.workflowIDs, id)
			}
		}
		slices.Sort(sp.workflowIDs)
	}
	if slices.Contains(sp.scopes, ScopeAdmin) && len(sp.workflowIDs) > 0 {
		return nil, errorf(http.StatusBadRequest, "workflow_ids: an admin token is always unrestricted and cannot be confined to workflows")
	}
	return sp, nil
}

func checkWorkflowID(field, id string) error {
	if strings.TrimSpace(id) == "" || len(id) > MaxWorkflowIDSize {
		return errorf(http.StatusBadRequest, "%s: must be 1 to %d characters, not blank", field, MaxWorkflowIDSize)
	}
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var req tokenRequest
	if err := s.decodeBody(w, r, &req, false); err != nil {
		return err
	}
	now := time.Now()
	sp, err := req.check(now)
	if err != nil {
		return err
	}
	id, secret := NewToken()
	t := &store.Token{ID: id, Label: sp.label, Scopes: sp.scopes, SecretHash: HashToken(secret),
		CreatedAt: now, WorkflowIDs: sp.workflowIDs}
	if sp.expiresIn != nil {
		exp := now.Add(time.Duration(*sp.expiresIn) * time.Second)
		t.ExpiresAt = &exp
	}
	if _, err := s.store.TokenInsert(r.Context(), t); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": secret, "token_id": id, "label": sp.label, "scopes": sp.scopes,
		"expires_in_secs": sp.expiresIn, "workflow_ids": sp.workflowIDs, "note": noteSaveToken,
	})
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if principal(r).ID == id {
		return errorf(http.StatusBadRequest, msgRevokeSelf)
	}
	err := s.store.TokenRevoke(r.Context(), id, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "token not found")
	}
	if err != nil {
		return err
	}
	s.tokens.clear()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}

// token returns the token named by the path, or 404.
func (s *Server) token(r *http.Request) (*store.Token, error) {
	t, err := s.store.TokenGet(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "token not found")
	}
	return t, err
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) error {
	t, err := s.token(r)
	if err != nil {
		return err
	}
	note := noteRestricted
	if len(t.WorkflowIDs) == 0 {
		note = noteUnrestricted
	}
	writeJSON(w, http.StatusOK, map[string]any{"token_id": t.ID, "workflow_ids": orEmpty(t.WorkflowIDs), "note": note})
	return nil
}

func (s *Server) addGrant(w http.ResponseWriter, r *http.Request) error {
	wf := r.PathValue("workflow_id")
	if err := checkWorkflowID("workflow_id", wf); err != nil {
		return err
	}
	t, err := s.token(r)
	if err != nil {
		return err
	}
	if t.RevokedAt != nil {
		return errorf(http.StatusNotFound, "token not found (it is revoked)")
	}
	if slices.Contains(t.Scopes, ScopeAdmin) {
		return errorf(http.StatusBadRequest, "token_id: an admin token is always unrestricted and cannot be granted workflows")
	}
	err = s.store.GrantAdd(r.Context(), t.ID, wf)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "token not found")
	}
	if err != nil {
		return err
	}
	s.tokens.clear()
	writeJSON(w, http.StatusCreated, map[string]any{"ok": true, "token_id": t.ID, "workflow_id": wf, "note": noteGranted})
	return nil
}

func (s *Server) removeGrant(w http.ResponseWriter, r *http.Request) error {
	err := s.store.GrantRemove(r.Context(), r.PathValue("id"), r.PathValue("workflow_id"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "token not found")
	case errors.Is(err, store.ErrLastGrant):
		return errorf(http.StatusConflict, "this is the token's only workflow grant: removing it would make the token unrestricted; revoke the token instead")
	case err != nil:
		return err
	}
	s.tokens.clear()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}
