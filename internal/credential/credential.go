// Package credential is svc's credential store (spec/server.md section 4,
// "Credentials"): field rules, encryption through secret.Box, and the
// decrypted values the engine resolves credential fields from and masks in
// run results.
package credential

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/svcrun/svc/internal/secret"
	"github.com/svcrun/svc/internal/store"
)

// Limits of the credential fields.
const (
	MaxIDLength    = 128
	MaxNameLength  = 256
	MaxValueLength = 65536
)

// Types are the accepted cred_type values; the first is the default.
var Types = []string{"api_key", "bearer", "basic", "oauth", "other"}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// FieldError is a request field that breaks a rule.
type FieldError struct {
	Field, Reason string
}

// Error names the field and the rule.
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Input is a create or update request.
type Input struct {
	ID, Name, Value, Type string
	Update                bool
}

// Check applies the field rules; Type "" becomes the default.
func (in *Input) Check() error {
	switch {
	case in.ID == "" || len(in.ID) > MaxIDLength || !idPattern.MatchString(in.ID):
		return &FieldError{"id", fmt.Sprintf("must be 1 to %d characters: letters, digits, _ or -", MaxIDLength)}
	case strings.TrimSpace(in.Name) == "":
		return &FieldError{"name", "must not be blank"}
	case utf8.RuneCountInString(in.Name) > MaxNameLength:
		return &FieldError{"name", fmt.Sprintf("must be at most %d characters", MaxNameLength)}
	case !utf8.ValidString(in.Name) || strings.ContainsFunc(in.Name, unicode.IsControl):
		return &FieldError{"name", "must not contain control characters"}
	case in.Value == "" && !in.Update:
		return &FieldError{"value", "must not be empty"}
	case len(in.Value) > MaxValueLength:
		return &FieldError{"value", fmt.Sprintf("must be at most %d bytes", MaxValueLength)}
	}
	if in.Type == "" {
		in.Type = Types[0]
	}
	if !slices.Contains(Types, in.Type) {
		return &FieldError{"cred_type", "must be one of " + strings.Join(Types, ", ")}
	}
	return nil
}

// Service keeps credentials encrypted in a store and their decrypted
// values in memory, for resolving and masking. It assumes it is the only
// writer of the store's credentials (one server per database).
type Service struct {
	st  store.Store
	box *secret.Box

	mu     sync.Mutex // serializes writes and the values map
	values map[string]string
	// list is a snapshot of the values, for masking without a lock.
	list atomic.Pointer[[]string]
}

// Open loads and decrypts every stored credential. A credential that does
// not decrypt means the key is not the one it was saved with: Open fails.
func Open(ctx context.Context, st store.Store, box *secret.Box) (*Service, error) {
	creds, err := st.CredentialList(ctx)
	if err != nil {
		return nil, err
	}
	s := &Service{st: st, box: box, values: make(map[string]string, len(creds))}
	for _, c := range creds {
		v, err := box.Open(c.ID, c.Ciphertext)
		if err != nil {
			return nil, fmt.Errorf("credential %q does not decrypt with this key (was the key file replaced?): %w", c.ID, err)
		}
		s.values[c.ID] = string(v)
	}
	s.snapshot()
	return s, nil
}

func (s *Service) snapshot() {
	l := slices.Collect(maps.Values(s.values))
	s.list.Store(&l)
}

// List returns the stored credentials without their secrets.
func (s *Service) List(ctx context.Context) ([]store.Credential, error) {
	creds, err := s.st.CredentialList(ctx)
	for i := range creds {
		creds[i].Ciphertext = nil
	}
	return creds, err
}

// Put creates or, with Update, replaces a credential: store.ErrExists if
// the id is taken without Update, store.ErrNotFound if Update names a
// missing one. An empty Value on update keeps the stored secret.
func (s *Service) Put(ctx context.Context, in Input) error {
	if err := in.Check(); err != nil {
		return err
	}
	c := &store.Credential{ID: in.ID, Name: in.Name, Type: in.Type, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if in.Value != "" {
		c.Ciphertext = s.box.Seal(in.ID, []byte(in.Value))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.CredentialPut(ctx, c, in.Update); err != nil {
		return err
	}
	if in.Value != "" {
		s.values[in.ID] = in.Value
		s.snapshot()
	}
	return nil
}

// Delete removes a credential; store.ErrNotFound if unknown.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.CredentialDelete(ctx, id); err != nil {
		return err
	}
	delete(s.values, id)
	s.snapshot()
	return nil
}

// ErrUnknown is returned by CredentialValue for an id not saved.
var ErrUnknown = errors.New("no credential with this id is saved")

// CredentialValue returns a credential's secret (engine.CredentialSource).
func (s *Service) CredentialValue(_ context.Context, id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[id]
	if !ok {
		return "", ErrUnknown
	}
	return v, nil
}

// Values returns every saved secret, for masking run results. The slice
// must not be modified.
func (s *Service) Values() []string {
	if l := s.list.Load(); l != nil {
		return *l
	}
	return nil
}
