package process

import (
	"strings"
	"testing"
)

func TestMaskSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"password=hunter2 ok", "password=**** ok"},
		{"PGPASSWORD='x y z' next", "PGPASSWORD=**** next"},
		{`{"api_key": "abc123", "user": "bob"}`, `{"api_key": ****, "user": "bob"}`},
		{"client_secret: s3cr3t", "client_secret: ****"},
		{"url?token=abc&page=2", "url?token=****&page=2"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer ****"},
		{"curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "curl -H 'Authorization: Basic ****'"},
		{"Bearer abcdefghijklmnop expired", "Bearer **** expired"},
		{"id AKIAIOSFODNN7EXAMPLE used", "id AKIA**** used"},
		{"ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_****"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_****"},
		{"glpat-abcdefghij0123456789", "glpat-****"},
		{"key sk-proj-abcdefghijklmnopqrstuvwx!", "key sk-****!"},
		{"sk-ant-api03-abcdefghijklmnop", "sk-****"},
		{"sk_live_abcdefghijklmnop1234", "sk_live_****"},
		{"xoxb-123456789012-abcdefghij", "xoxb-****"},
		{"xoxp-1-2-3-abcdefabcdef", "xoxp-****"},
		{"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIza****"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop", "jwt [jwt masked]"},
		{"postgres://app:s3cr3t@db/x", "postgres://app:****@db/x"},
		{"https://user@host/path", "https://user@host/path"},
		{"a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nb", "a\n[private key masked]\nb"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n(cut)", "[private key masked]"},
		{"MIIEow\nAAAA\n-----END PRIVATE KEY-----\nafter", "[private key masked]\nafter"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQdGBF\n-----END PGP PRIVATE KEY BLOCK-----", "[private key masked]"},
		// Ordinary text stays.
		{"error: task-runner failed; risk-assessment done; basic usage", "error: task-runner failed; risk-assessment done; basic usage"},
		{"the token expired", "the token expired"},
		{"exit status 1", "exit status 1"},
	}
	for _, tt := range tests {
		if got := maskSecrets(tt.in); got != tt.want {
			t.Errorf("maskSecrets(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestFailureTail(t *testing.T) {
	t.Parallel()
	newc := func(s string) *capture {
		c := newCapture("x", 100, false, 1<<30)
		c.write([]byte(s)) //nolint:errcheck // no flood here
		return c
	}
	if got := failureTail(newc("out"), newc(" \n")); got != "out" {
		t.Errorf("failureTail with blank stderr = %q; want stdout", got)
	}
	if got := failureTail(newc("out"), newc("err\n")); got != "err" {
		t.Errorf("failureTail = %q; want stderr", got)
	}
	// A key block whose start is outside what is shown is still masked.
	long := "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("QUJD\n", 1000) + "-----END PRIVATE KEY-----\ndone"
	got := failureTail(newc(""), newc(long))
	if strings.Contains(got, "QUJD") || !strings.HasSuffix(got, "done") {
		t.Errorf("failureTail = %q; want the key masked and the end kept", got)
	}
	big := failureTail(newc(""), newc(strings.Repeat("é", 5000)))
	if len(big) > maxTail+3 || !strings.HasPrefix(big, "...é") {
		t.Errorf("failureTail of 10000 bytes is %d bytes starting %.10q; want at most %d, starting ...é", len(big), big, maxTail+3)
	}
}
