package email

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	s, ok := node.Default().Lookup("send_email")
	if !ok {
		t.Fatal("send_email is not registered")
	}
	if s.Category != node.CategoryAction || !s.Enabled || s.DefaultOutput() != node.PortOut {
		t.Errorf("spec category %q enabled %v output %q; want core_action, true, out", s.Category, s.Enabled, s.DefaultOutput())
	}
	props := s.InputSchema()["properties"].(map[string]any)
	pw := props["password"].(map[string]any)
	if pw["x-svc-credential"] != true || pw["x-svc-secret"] != true {
		t.Errorf("password schema = %v; want a credential-resolved secret", pw)
	}
	if port := props["smtp_port"].(map[string]any); port["default"] != 587 {
		t.Errorf("smtp_port schema = %v; want default 587", port)
	}
	for _, f := range s.Fields {
		if f.Secret || f.Credential {
			if f.Name != "password" {
				t.Errorf("field %s is secret; want only password", f.Name)
			}
		}
	}
	req := s.InputSchema()["required"].([]string)
	if want := "smtp_host from to subject body"; strings.Join(req, " ") != want {
		t.Errorf("required = %v; want %s", req, want)
	}
}

// TestConfigErrors: every config error is reported before any connection
// is attempted. The config points at a port nothing listens on through a
// dial that counts its calls: a connection attempt would both count and
// fail with another code.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	var dials atomic.Int32
	opts := Options{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	port := closedPort(t)
	base := func() map[string]any {
		return map[string]any{
			"smtp_host": "127.0.0.1", "smtp_port": port,
			"from": "sender@example.com", "to": "rcpt@example.com", "subject": "s", "body": "b",
		}
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = "r@example.com"
	}
	tests := []struct {
		name  string
		field string
		value any // nil deletes the field
		code  string
	}{
		{"port zero", "smtp_port", 0, node.CodeInvalidPort},
		{"port negative", "smtp_port", -25, node.CodeInvalidPort},
		{"port too large", "smtp_port", 65536, node.CodeInvalidPort},
		{"port text", "smtp_port", "smtp", node.CodeInvalidPort},
		{"port fraction", "smtp_port", 587.5, node.CodeInvalidPort},
		{"host missing", "smtp_host", nil, node.CodeInvalidConfig},
		{"host blank", "smtp_host", "  ", node.CodeInvalidConfig},
		{"host with port", "smtp_host", "smtp.example.com:587", node.CodeInvalidConfig},
		{"host with space", "smtp_host", "smtp example.com", node.CodeInvalidConfig},
		{"host URL", "smtp_host", "smtp://smtp.example.com", node.CodeInvalidConfig},
		{"from missing", "from", nil, node.CodeInvalidConfig},
		{"from not an address", "from", "sender", node.CodeInvalidConfig},
		{"from two addresses", "from", "a@example.com, b@example.com", node.CodeInvalidConfig},
		{"from header injection", "from", "a@example.com\r\nBcc: victim@example.com", node.CodeInvalidConfig},
		{"from outside ASCII", "from", "josé@example.com", node.CodeInvalidConfig},
		{"to missing", "to", nil, node.CodeInvalidConfig},
		{"to blank", "to", " ", node.CodeInvalidConfig},
		{"to only commas", "to", " , ,", CodeInvalidTo},
		{"to empty array", "to", []any{}, CodeInvalidTo},
		{"to number", "to", 42, CodeInvalidTo},
		{"to boolean", "to", true, CodeInvalidTo},
		{"to object", "to", map[string]any{"email": "a@example.com"}, CodeInvalidTo},
		{"to array of numbers", "to", []any{"a@example.com", 7}, CodeInvalidTo},
		{"to nested array", "to", []any{[]any{"a@example.com"}}, CodeInvalidTo},
		{"to not an address", "to", "a@example.com, nobody", CodeInvalidTo},
		{"to header injection", "to", "a@example.com\r\nBcc: victim@example.com", CodeInvalidTo},
		{"to header injection in array", "to", []any{"a@example.com\nBcc: victim@example.com"}, CodeInvalidTo},
		{"to 51 recipients", "to", many, CodeInvalidTo},
		{"to 51 recipients as text", "to", strings.Repeat("r@example.com,", 51), CodeInvalidTo},
		{"subject missing", "subject", nil, CodeMissingSubject},
		{"subject number", "subject", 5, CodeInvalidSubject},
		{"subject object", "subject", map[string]any{}, CodeInvalidSubject},
		{"subject header injection", "subject", "Hi\r\nBcc: victim@example.com", CodeInvalidSubject},
		{"subject LF", "subject", "line\nline", CodeInvalidSubject},
		{"body missing", "body", nil, CodeMissingBody},
		{"body number", "body", 5, CodeInvalidBody},
		{"body array", "body", []any{"a"}, CodeInvalidBody},
		{"html unreadable", "html", "maybe", node.CodeInvalidConfig},
		{"username without password", "username", "alice", node.CodeInvalidConfig},
		{"password without username", "password", "secret", node.CodeInvalidConfig},
	}
	for _, tt := range tests {
		raw := base()
		if tt.value == nil {
			delete(raw, tt.field)
		} else {
			raw[tt.field] = tt.value
		}
		_, _, err := send(t, opts, raw)
		field := tt.field
		switch tt.name {
		case "username without password":
			field = "password"
		case "password without username":
			field = "username"
		}
		nodetest.WantError(t, tt.name, err, tt.code, field)
		if strings.Contains(tt.name, "injection") && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q holds a line break", tt.name, err)
		}
	}
	// A JSON null is missing, like an absent key.
	for _, f := range []struct{ field, code string }{{"subject", CodeMissingSubject}, {"body", CodeMissingBody}} {
		raw := base()
		raw[f.field] = nil
		_, _, err := send(t, opts, raw)
		nodetest.WantError(t, f.field+" null", err, f.code, f.field)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("the node dialed %d times; want no connection for an invalid config", n)
	}
}

// TestConfigAccepted: values the rules allow build a node.
func TestConfigAccepted(t *testing.T) {
	t.Parallel()
	fifty := make([]any, 50)
	for i := range fifty {
		fifty[i] = "r@example.com"
	}
	tests := []struct {
		name     string
		changes  map[string]any
		wantPort int
		wantHost string
	}{
		{"defaults", nil, 587, "smtp.example.com"},
		{"port blank", map[string]any{"smtp_port": ""}, 587, "smtp.example.com"},
		{"port 465 as text", map[string]any{"smtp_port": "465"}, 465, "smtp.example.com"},
		{"port 1", map[string]any{"smtp_port": 1}, 1, "smtp.example.com"},
		{"port 65535", map[string]any{"smtp_port": 65535}, 65535, "smtp.example.com"},
		{"IPv6 in brackets", map[string]any{"smtp_host": "[::1]"}, 587, "::1"},
		{"host with a final dot and spaces", map[string]any{"smtp_host": " smtp.example.com. "}, 587, "smtp.example.com."},
		{"empty subject and body", map[string]any{"subject": "", "body": ""}, 587, "smtp.example.com"},
		{"50 recipients", map[string]any{"to": fifty}, 587, "smtp.example.com"},
		{"login", map[string]any{"username": "alice", "password": " spaces kept "}, 587, "smtp.example.com"},
		{"html as text", map[string]any{"html": "yes"}, 587, "smtp.example.com"},
	}
	for _, tt := range tests {
		raw := map[string]any{"smtp_host": "smtp.example.com", "from": "a@example.com", "to": "b@example.com", "subject": "s", "body": "b"}
		for k, v := range tt.changes {
			raw[k] = v
		}
		r, err := nodetest.Build(Spec(), raw)
		if err != nil {
			t.Errorf("%s: Build error: %v", tt.name, err)
			continue
		}
		s := r.(*sender)
		if s.port != tt.wantPort || s.host != tt.wantHost {
			t.Errorf("%s: Build = host %q port %d; want %q, %d", tt.name, s.host, s.port, tt.wantHost, tt.wantPort)
		}
		if tt.name == "login" && s.password != " spaces kept " {
			t.Errorf("login: password = %q; want it unchanged", s.password)
		}
	}
}
