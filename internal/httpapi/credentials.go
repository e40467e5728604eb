package httpapi

import (
	"errors"
	"net/http"

	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/store"
)

// credentialItem is a credential as listed: never its secret.
type credentialItem struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	CredType string `json:"cred_type"`
}

// credentials returns the credential service after the server-wide ACL
// check.
func (s *Server) credentials(r *http.Request) (*credential.Service, error) {
	if err := permitServerWide(r); err != nil {
		return nil, err
	}
	if s.creds == nil {
		return nil, errors.New("credentials: no credential store is attached to this server")
	}
	return s.creds, nil
}

func (s *Server) listCredentials(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.credentials(r)
	if err != nil {
		return err
	}
	creds, err := cs.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]credentialItem, len(creds))
	for i, c := range creds {
		out[i] = credentialItem{ID: c.ID, Name: c.Name, CredType: c.Type}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// credentialRequest is the body of POST /api/credentials.
type credentialRequest struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	CredType string `json:"cred_type"`
	Update   bool   `json:"update"`
}

func (s *Server) saveCredential(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.credentials(r)
	if err != nil {
		return err
	}
	var req credentialRequest
	if err := s.decodeBody(w, r, &req, false); err != nil {
		return err
	}
	err = cs.Put(r.Context(), credential.Input{ID: req.ID, Name: req.Name, Value: req.Value, Type: req.CredType, Update: req.Update})
	var fe *credential.FieldError
	switch {
	case errors.As(err, &fe):
		return errorf(http.StatusBadRequest, "%s", fe.Error())
	case errors.Is(err, store.ErrExists):
		return errorf(http.StatusConflict, "credential %q exists; send update: true to replace it", req.ID)
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "credential not found")
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}

func (s *Server) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.credentials(r)
	if err != nil {
		return err
	}
	err = cs.Delete(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "credential not found")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}
