// Package widget holds the signed tokens of the public chat widget
// (spec/server.md, "Widget signed token" and "Mint token"): a token stands
// in for a Webhook trigger's secret, for one workflow, until it expires.
//
// A token is awh1.<expiry>.<signature>: expiry in Unix seconds, signature
// the base64url HMAC-SHA256, under a server-side key, of the workflow id,
// the expiry and a SHA-256 of the secret it was minted from. Changing the
// Webhook secret therefore voids the tokens minted from the old one, and a
// token minted for one workflow does not verify for another.
package widget

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Prefix starts every token.
const Prefix = "awh1."

// Limits of a token's time to live.
const (
	DefaultTTL = 300 * time.Second
	MinTTL     = time.Second
	MaxTTL     = 86400 * time.Second
)

// KeyFile is the key's file name in the data directory.
const KeyFile = "widget.key"

// Errors of Verify.
var (
	ErrMalformed = errors.New("widget token: malformed")
	ErrExpired   = errors.New("widget token: expired")
	ErrSignature = errors.New("widget token: signature does not match (another workflow, or another secret)")
)

// Signer mints and verifies tokens.
type Signer struct{ key []byte }

// NewSigner returns a signer with a key of at least 32 bytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("widget: key of %d bytes; want at least 32", len(key))
	}
	return &Signer{key: key}, nil
}

// LoadKey reads the key file at path, creating it (0600, 32 random bytes
// in base64) when it does not exist.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < 32 {
			return nil, fmt.Errorf("widget key %s: not 32 bytes of base64", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path)
		return nil, err
	}
	return key, nil
}

// ClampTTL clamps a requested time to live to [MinTTL, MaxTTL].
func ClampTTL(d time.Duration) time.Duration { return min(max(d, MinTTL), MaxTTL) }

// Mint returns a token for workflowID's secret that expires after ttl
// (clamped), and its expiry.
func (s *Signer) Mint(workflowID, secret string, ttl time.Duration, now time.Time) (string, time.Time) {
	exp := now.Add(ClampTTL(ttl)).Truncate(time.Second)
	e := strconv.FormatInt(exp.Unix(), 10)
	return Prefix + e + "." + s.sign(workflowID, e, secret), exp
}

// Verify checks that token was minted for workflowID's secret and has not
// expired at now.
func (s *Signer) Verify(workflowID, secret, token string, now time.Time) error {
	rest, ok := strings.CutPrefix(token, Prefix)
	if !ok {
		return ErrMalformed
	}
	e, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return ErrMalformed
	}
	exp, err := strconv.ParseInt(e, 10, 64)
	if err != nil || exp <= 0 || e != strconv.FormatInt(exp, 10) {
		return ErrMalformed
	}
	if !hmac.Equal([]byte(sig), []byte(s.sign(workflowID, e, secret))) {
		return ErrSignature
	}
	if !now.Before(time.Unix(exp, 0)) {
		return ErrExpired
	}
	return nil
}

func (s *Signer) sign(workflowID, expiry, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(Prefix))
	m.Write([]byte(strconv.Itoa(len(workflowID))))
	m.Write([]byte{':'})
	m.Write([]byte(workflowID))
	m.Write([]byte{'.'})
	m.Write([]byte(expiry))
	m.Write([]byte{'.'})
	m.Write(sum[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SecretHeaderSafe reports whether a secret holds only visible ASCII and
// space, the characters a header value can carry as is.
func SecretHeaderSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
