package widget

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMintVerify(t *testing.T) {
	t.Parallel()
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	tok, exp := s.Mint("chat", "s3cret", 10*time.Second, now)
	if !strings.HasPrefix(tok, "awh1.1800000010.") || !exp.Equal(now.Add(10*time.Second)) {
		t.Fatalf("Mint = %q, %v", tok, exp)
	}
	other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	for _, tc := range []struct {
		name    string
		s       *Signer
		wf, sec string
		tok     string
		at      time.Time
		want    error
	}{
		{"valid", s, "chat", "s3cret", tok, now.Add(9 * time.Second), nil},
		{"expired at expiry", s, "chat", "s3cret", tok, now.Add(10 * time.Second), ErrExpired},
		{"another workflow", s, "chat2", "s3cret", tok, now, ErrSignature},
		{"another secret", s, "chat", "s3cret2", tok, now, ErrSignature},
		{"another server key", other, "chat", "s3cret", tok, now, ErrSignature},
		{"raw secret", s, "chat", "s3cret", "s3cret", now, ErrMalformed},
		{"no signature", s, "chat", "s3cret", "awh1.1800000010", now, ErrMalformed},
		{"expiry not a number", s, "chat", "s3cret", "awh1.soon.abc", now, ErrMalformed},
		{"expiry with a leading zero", s, "chat", "s3cret", strings.Replace(tok, "awh1.", "awh1.0", 1), now, ErrMalformed},
		{"later expiry, same signature", s, "chat", "s3cret", strings.Replace(tok, "1800000010", "1800000099", 1), now, ErrSignature},
	} {
		if err := tc.s.Verify(tc.wf, tc.sec, tc.tok, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v; want %v", tc.name, err, tc.want)
		}
	}
	// The id and the expiry cannot be shifted into each other.
	a, _ := s.Mint("a.1", "x", time.Second, now)
	if s.Verify("a", "x", a, now) == nil {
		t.Error("a token for workflow a.1 verifies for workflow a")
	}
}

func TestClampTTL(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Duration]time.Duration{0: time.Second, -time.Hour: time.Second,
		time.Minute: time.Minute, 48 * time.Hour: 24 * time.Hour} {
		if got := ClampTTL(in); got != want {
			t.Errorf("ClampTTL(%v) = %v; want %v", in, got, want)
		}
	}
}

func TestLoadKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), KeyFile)
	k1, err := LoadKey(path)
	if err != nil || len(k1) != 32 {
		t.Fatalf("LoadKey = %d bytes, %v", len(k1), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, %v", fi.Mode(), err)
	}
	k2, err := LoadKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Errorf("second LoadKey differs: %v", err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := LoadKey(path); err == nil {
		t.Error("a broken key file was accepted")
	}
}

func TestSecretHeaderSafe(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"abc DEF~!": true, "": true, "tab\there": false, "é": false, "nl\n": false, "\x7f": false} {
		if got := SecretHeaderSafe(s); got != want {
			t.Errorf("SecretHeaderSafe(%q) = %v; want %v", s, got, want)
		}
	}
}
