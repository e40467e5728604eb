package database

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestBlockedReason(t *testing.T) {
	t.Parallel()
	blocked := []string{
		"127.0.0.1", "127.5.6.7", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255",
		"192.168.0.1", "169.254.169.254", "0.0.0.0", "0.1.2.3", "100.64.0.1", "100.127.255.254",
		"192.0.0.8", "198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::1", "::", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "fec0::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:0:7f00:1", "::ffff:169.254.169.254", "::127.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::", "2002:c0a8:101::1", "2001::1", "2001:db8::1",
	}
	for _, s := range blocked {
		if r := blockedReason(netip.MustParseAddr(s)); r == "" {
			t.Errorf("blockedReason(%s) = \"\"; want it refused", s)
		}
	}
	public := []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}
	for _, s := range public {
		if r := blockedReason(netip.MustParseAddr(s)); r != "" {
			t.Errorf("blockedReason(%s) = %q; want it allowed", s, r)
		}
	}
}

// TestSSRFRefusals: with allow_local off, every way of naming a local or
// private destination fails ADDRESS_NOT_ALLOWED naming connection_url,
// before connecting. The loopback cases point at the real services, so a
// check that let them through would connect and succeed.
func TestSSRFRefusals(t *testing.T) {
	t.Parallel()
	pg := func(url string) map[string]any { return sqlConf(TypePostgres, url, "query", "SELECT 1") }
	my := func(url string) map[string]any { return sqlConf(TypeMySQL, url, "query", "SELECT 1") }
	kv := func(url string) map[string]any {
		return map[string]any{"db_type": TypeKV, "connection_url": url, "operation": "get", "key": "k"}
	}
	tests := []struct {
		name string
		raw  map[string]any
	}{
		{"pg loopback", pg("postgres://postgres@127.0.0.1:5432/test?sslmode=disable")},
		{"pg localhost name", pg("postgres://postgres@localhost:5432/test?sslmode=disable")},
		{"pg 10/8", pg("postgres://u@10.1.2.3/db")},
		{"pg 172.16/12", pg("postgres://u@172.16.5.4/db")},
		{"pg 192.168/16", pg("postgres://u@192.168.1.1/db")},
		{"pg 169.254/16 metadata", pg("postgres://u@169.254.169.254/db")},
		{"pg ::1", pg("postgres://postgres@[::1]:5432/test?sslmode=disable")},
		{"pg fe80::", pg("postgres://u@[fe80::1]/db")},
		{"pg fc00::", pg("postgres://u@[fc00::1]/db")},
		{"pg ::ffff:127.0.0.1", pg("postgres://postgres@[::ffff:127.0.0.1]:5432/test?sslmode=disable")},
		{"pg 0.0.0.0", pg("postgres://postgres@0.0.0.0:5432/test?sslmode=disable")},
		{"pg CGNAT", pg("postgres://u@100.64.0.1/db")},
		{"pg host parameter", pg("postgres://u@8.8.8.8/db?host=127.0.0.1")},
		{"pg hostaddr parameter", pg("postgres://postgres@db.example.com:5432/test?hostaddr=127.0.0.1&sslmode=disable")},
		{"pg port parameter keeps the host check", pg("postgres://postgres@127.0.0.1/test?port=5432&sslmode=disable")},
		{"pg second host private", pg("postgres://u@8.8.8.8,10.0.0.1/db")},
		{"pg unix socket host parameter", pg("postgres://postgres@/test?host=/var/run/postgresql")},
		{"pg unix socket host", pg("postgres://postgres@%2Fvar%2Frun%2Fpostgresql/test")},
		{"mysql loopback", my("mysql://root@127.0.0.1:3306/test")},
		{"mysql localhost", my("mysql://root@localhost:3306/test")},
		{"mysql private", my("mysql://root@10.0.0.5/test")},
		{"mysql DSN loopback", my("root@tcp(127.0.0.1:3306)/test")},
		{"mysql DSN unix socket", my("root@unix(/run/mysqld/mysqld.sock)/test")},
		{"mysql ipv6 mapped", my("mysql://root@[::ffff:127.0.0.1]:3306/test")},
		{"redis loopback", kv("redis://127.0.0.1:6379/0")},
		{"redis ::1", kv("redis://[::1]:6379/0")},
		{"redis private", kv("redis://192.168.10.10:6379")},
		{"redis link-local", kv("redis://169.254.0.1:6379")},
		{"redis unix", kv("unix:///var/run/redis/redis-server.sock")},
		{"redis tls loopback", kv("rediss://127.0.0.1:6379")},
	}
	for _, tt := range tests {
		start := time.Now()
		tt.raw["allow_local"] = false
		out, err := runNode(t, tt.raw, nodetest.New(nil))
		if err == nil {
			t.Errorf("%s: run = %v; want ADDRESS_NOT_ALLOWED", tt.name, out)
			continue
		}
		wantCode(t, tt.name, err, CodeAddressNotAllowed, "connection_url")
		if !strings.Contains(err.Error(), "allow_local") {
			t.Errorf("%s: error %q; want it to name allow_local", tt.name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: refused after %v; want it refused before connecting", tt.name, d)
		}
	}
}

// TestDialTimeGuard skips the check made before connecting and shows that
// each driver's dialer refuses a local address on its own: this is what
// catches a name that resolves to a public address at the check and to a
// local one at the dial (DNS rebinding).
func TestDialTimeGuard(t *testing.T) {
	t.Parallel()
	g := guard{}
	if _, err := g.dial(t.Context(), "tcp", "localhost:5432"); err == nil {
		t.Fatalf("dial localhost:5432 succeeded; want a refusal")
	} else if _, ok := asAddrError(err); !ok {
		t.Errorf("dial localhost:5432 error %v; want an addrError", err)
	}
	if _, err := g.dial(t.Context(), "unix", "/var/run/postgresql/.s.PGSQL.5432"); err == nil {
		t.Errorf("dial of a Unix socket succeeded; want a refusal")
	}
	tests := []struct {
		name string
		opts Options
	}{
		{"pg", Options{DBType: TypePostgres, ConnectionURL: "postgres://postgres@localhost:5432/test?sslmode=disable", Query: "SELECT 1"}},
		{"pg hostaddr", Options{DBType: TypePostgres, ConnectionURL: "postgres://postgres@db.example.com:5432/test?hostaddr=127.0.0.1&sslmode=disable", Query: "SELECT 1"}},
		{"mysql", Options{DBType: TypeMySQL, ConnectionURL: "mysql://root@localhost:3306/test", Query: "SELECT 1"}},
		{"redis", Options{DBType: TypeKV, ConnectionURL: "redis://localhost:6379/0", Key: "k"}},
	}
	for _, tt := range tests {
		d, err := New(tt.opts)
		if err != nil {
			t.Fatalf("%s: New: %v", tt.name, err)
		}
		env := nodetest.New(nil)
		switch tt.opts.DBType {
		case TypePostgres:
			_, err = d.runPostgres(t.Context(), env, g)
		case TypeMySQL:
			_, err = d.runMySQL(t.Context(), env, g)
		case TypeKV:
			_, err = d.runKV(t.Context(), g)
		}
		wantCode(t, tt.name+" without the early check", err, CodeAddressNotAllowed, "connection_url")
	}
}

// TestAllowLocal: with allow_local on, the same destinations are reached,
// Unix sockets included.
func TestAllowLocal(t *testing.T) {
	t.Parallel()
	raws := []map[string]any{
		sqlConf(TypePostgres, "postgres://postgres@localhost:5432/test?sslmode=disable", "query", "SELECT 1 AS one"),
		sqlConf(TypePostgres, "postgres://postgres@db.invalid:5432/test?hostaddr=127.0.0.1&sslmode=disable", "query", "SELECT 1 AS one"),
		sqlConf(TypeMySQL, "root@tcp(127.0.0.1:3306)/test", "query", "SELECT 1 AS one"),
	}
	if _, err := os.Stat("/var/run/postgresql/.s.PGSQL.5432"); err == nil {
		raws = append(raws, sqlConf(TypePostgres, "postgres://postgres@/test?host=/var/run/postgresql", "query", "SELECT 1 AS one"))
	}
	for _, raw := range raws {
		out := mustRun(t, raw)
		if rows := rowsOf(t, out); len(rows) != 1 || rows[0]["one"] != 1 {
			t.Errorf("%v: rows = %v; want [{one: 1}]", raw["connection_url"], rows)
		}
	}
	out := mustRun(t, map[string]any{"db_type": TypeKV, "connection_url": "redis://localhost:6379/0", "operation": "get", "key": unique("absent"), "allow_local": true})
	if out["ok"] != false {
		t.Errorf("redis get of an absent key: ok = %v; want false", out["ok"])
	}
}

func TestAddrErrorMessage(t *testing.T) {
	t.Parallel()
	err := guard{}.checkIP("db.example.com", netip.MustParseAddr("10.0.0.1"))
	var ae *addrError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "db.example.com (10.0.0.1) is a private address") {
		t.Errorf("checkIP error = %v; want it to name the host, the address and the reason", err)
	}
}
