package database

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	s := Spec()
	if s.TypeID != "database" || s.Enabled || s.EnableFlag != "--allow-database" || s.Category != node.CategoryAction {
		t.Errorf("spec = %q enabled %v flag %q category %q; want database, false, --allow-database, core_action",
			s.TypeID, s.Enabled, s.EnableFlag, s.Category)
	}
	if want := []node.Port{node.OutPort, node.ErrorPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("database"); !ok {
		t.Errorf("database is not registered")
	}
	fields := map[string]node.Field{}
	for _, f := range s.Fields {
		fields[f.Name] = f
	}
	for _, name := range []string{"db_type", "db_path", "connection_url", "password", "query", "params", "operation",
		"key", "value", "field", "expire", "allow_raw_sql", "allow_local"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("field %s is missing", name)
		}
	}
	if f := fields["password"]; !f.Credential {
		t.Errorf("password is not credential-resolved")
	}
	if f := fields["query"]; !f.NoExpressions {
		t.Errorf("query accepts expressions")
	}
	if fields["allow_raw_sql"].Default != false || fields["allow_local"].Default != false || fields["db_type"].Default != TypeEmbedded {
		t.Errorf("defaults: allow_raw_sql %v, allow_local %v, db_type %v; want false, false, sql_embedded",
			fields["allow_raw_sql"].Default, fields["allow_local"].Default, fields["db_type"].Default)
	}
	schema := s.InputSchema()["properties"].(map[string]any)["password"].(map[string]any)
	if schema["x-svc-secret"] != true || schema["x-svc-credential"] != true {
		t.Errorf("password schema = %v; want it secret and credential-resolved", schema)
	}
	if !strings.Contains(RebindingWarning, "DNS rebinding") {
		t.Errorf("RebindingWarning = %q; want it to speak of DNS rebinding", RebindingWarning)
	}
}

// TestConfigErrors: bad configurations fail before any connection. The
// SQL and key-value ones point at a port nothing listens on, so reaching
// the network would fail CONNECTION_FAILED instead.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "x.db")
	tests := []struct {
		name  string
		raw   map[string]any
		code  string
		field string
	}{
		{"bad db_type", map[string]any{"db_type": "oracle", "connection_url": closedPG, "query": "SELECT 1"}, node.CodeInvalidConfig, "db_type"},
		{"relative db_path", map[string]any{"db_path": "data/x.db", "query": "SELECT 1"}, node.CodeInvalidConfig, "db_path"},
		{"db_path with another extension", map[string]any{"db_path": "/tmp/x.txt", "query": "SELECT 1"}, node.CodeInvalidConfig, "db_path"},
		{"db_path missing", map[string]any{"query": "SELECT 1"}, node.CodeInvalidConfig, "db_path"},
		{"params not an array", sqlConfWith(closedPG, "SELECT ?", "params", `{"a": 1}`), CodeInvalidParams, "params"},
		{"params not JSON", sqlConfWith(closedPG, "SELECT ?", "params", "1, 2"), CodeInvalidParams, "params"},
		{"params an object value", sqlConfWith(closedPG, "SELECT ?", "params", map[string]any{"a": 1}), CodeInvalidParams, "params"},
		{"too few params", sqlConfWith(closedPG, "SELECT ?, ?", "params", []any{1}), CodeInvalidParams, "params"},
		{"too many params", sqlConfWith(closedPG, "SELECT 1", "params", []any{1}), CodeInvalidParams, "params"},
		{"expression in query", sqlConfWith(closedPG, "SELECT * FROM t WHERE a = {{ $input.a }}", "", nil), node.CodeInvalidConfig, "query"},
		{"expression in query, MySQL", map[string]any{"db_type": TypeMySQL, "connection_url": closedMySQL, "query": "SELECT {{1}}"}, node.CodeInvalidConfig, "query"},
		{"query missing", sqlConfWith(closedPG, "  ", "", nil), node.CodeInvalidConfig, "query"},
		{"literal without allow_raw_sql", sqlConfWith(closedPG, "SELECT 'x'", "", nil), CodeRawSQLNotAllowed, "query"},
		{"kv operation on SQL", sqlConfWith(closedPG, "SELECT 1", "operation", "get"), node.CodeInvalidConfig, "operation"},
		{"SQL operation on kv", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "query", "key": "k"}, node.CodeInvalidConfig, "operation"},
		{"unknown operation", sqlConfWith(closedPG, "SELECT 1", "operation", "truncate"), node.CodeInvalidConfig, "operation"},
		{"connection_url missing", map[string]any{"db_type": TypePostgres, "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"not a postgres URL", map[string]any{"db_type": TypePostgres, "connection_url": "mysql://x@h/db", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"pg sslkey reads a file", map[string]any{"db_type": TypePostgres, "connection_url": closedPG + "&sslkey=/etc/shadow", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"pg servicefile", map[string]any{"db_type": TypePostgres, "connection_url": closedPG + "&servicefile=/tmp/x&service=a", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"pg hostaddr not an IP", map[string]any{"db_type": TypePostgres, "connection_url": closedPG + "&hostaddr=db.example.com", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"pg bad port", map[string]any{"db_type": TypePostgres, "connection_url": "postgres://u:secret@h:99999/db", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"mysql autocommit", map[string]any{"db_type": TypeMySQL, "connection_url": closedMySQL + "?autocommit=0", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"mysql bad URL", map[string]any{"db_type": TypeMySQL, "connection_url": "mysql://root:secret@[::1/test", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"mysql bad DSN", map[string]any{"db_type": TypeMySQL, "connection_url": "root@tcp(127.0.0.1:1", "query": "SELECT 1"}, node.CodeInvalidConfig, "connection_url"},
		{"kv bad scheme", map[string]any{"db_type": TypeKV, "connection_url": "http://127.0.0.1:1", "key": "k"}, node.CodeInvalidConfig, "connection_url"},
		{"kv bad URL keeps the password out", map[string]any{"db_type": TypeKV, "connection_url": "redis://:secret@[::1:1", "key": "k"}, node.CodeInvalidConfig, "connection_url"},
		{"kv key missing", map[string]any{"db_type": TypeKV, "connection_url": closedKV}, CodeInvalidKey, "key"},
		{"kv key an object", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "key": map[string]any{"a": 1}}, CodeInvalidKey, "key"},
		{"kv value missing", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "set", "key": "k"}, CodeInvalidValue, "value"},
		{"kv value an array", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "lpush", "key": "k", "value": []any{1}}, CodeInvalidValue, "value"},
		{"kv field missing", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "hget", "key": "k"}, CodeInvalidField, "field"},
		{"kv field an object", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "hset", "key": "k", "field": map[string]any{}, "value": 1}, CodeInvalidField, "field"},
		{"expire not a number", map[string]any{"db_type": TypeKV, "connection_url": closedKV, "operation": "set", "key": "k", "value": 1, "expire": "soon"}, node.CodeInvalidConfig, "expire"},
		{"allow_local not a boolean", map[string]any{"db_path": dbPath, "query": "SELECT 1", "allow_local": "perhaps"}, node.CodeInvalidConfig, "allow_local"},
	}
	for _, tt := range tests {
		if _, ok := tt.raw["allow_local"]; !ok {
			tt.raw["allow_local"] = true
		}
		out, err := runNode(t, tt.raw, nodetest.New(nil))
		if err == nil {
			t.Errorf("%s: run = %v; want %s", tt.name, out, tt.code)
			continue
		}
		wantCode(t, tt.name, err, tt.code, tt.field)
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error %q shows the URL's password", tt.name, err)
		}
	}
}

func sqlConfWith(url, query, key string, v any) map[string]any {
	raw := map[string]any{"db_type": TypePostgres, "connection_url": url, "query": query}
	if key != "" {
		raw[key] = v
	}
	return raw
}

// TestRawSQLNeedsAdmin: allow_raw_sql is refused in a run no admin started,
// before connecting, and honoured in an admin's run (see the per-database
// tests for the run itself).
func TestRawSQLNeedsAdmin(t *testing.T) {
	t.Parallel()
	for _, raw := range []map[string]any{
		sqlConf(TypePostgres, closedPG, "query", "SELECT 'x'"),
		sqlConf(TypeMySQL, closedMySQL, "query", "SELECT 1"),
		sqlConf(TypeEmbedded, filepath.Join(t.TempDir(), "a.db"), "execute", "CREATE TABLE t (a TEXT DEFAULT 'x')"),
	} {
		raw["allow_raw_sql"] = true
		_, err := runNode(t, raw, nodetest.New(nil))
		wantCode(t, "allow_raw_sql without admin", err, CodeRawSQLNotAllowed, "allow_raw_sql")
	}
	env := nodetest.New(nil)
	env.AdminCaller = true
	out, err := runNode(t, sqlConf(TypeEmbedded, filepath.Join(t.TempDir(), "b.db"), "execute", "CREATE TABLE t (a TEXT DEFAULT 'x')"), env)
	wantCode(t, "literal, allow_raw_sql off, admin", err, CodeRawSQLNotAllowed, "query")
	raw := sqlConf(TypeEmbedded, filepath.Join(t.TempDir(), "c.db"), "execute", "CREATE TABLE t (a TEXT DEFAULT 'x')")
	raw["allow_raw_sql"] = true
	if out, err = runNode(t, raw, env); err != nil {
		t.Errorf("admin run with allow_raw_sql = %v, %v; want success", out, err)
	}
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	err := connectFailure("X", errors.New("refused"))
	if retryOf(err) != node.Retryable || node.CodeOf(err) != CodeConnectionFailed {
		t.Errorf("connectFailure = %v (retry %v); want retryable CONNECTION_FAILED", err, retryOf(err))
	}
	if err := lostFailure("X", errors.New("reset"), false); retryOf(err) != node.NoRetry || node.CodeOf(err) != CodeConnectionLost {
		t.Errorf("lostFailure(no retry) = %v; want CONNECTION_LOST not retryable", err)
	}
	if err := serverFailure(errors.New("syntax")); retryOf(err) != node.NoRetry || node.CodeOf(err) != node.CodeDBError {
		t.Errorf("serverFailure = %v; want DB_ERROR not retryable", err)
	}
}

// TestConcurrentRuns: one configured node runs many times at once (the
// engine may reuse a runner), each run with its own connection.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{DBType: TypePostgres, ConnectionURL: pgURL, Query: "SELECT ? AS v", Params: []any{7}, AllowLocal: true},
		{DBType: TypeMySQL, ConnectionURL: myURL, Query: "SELECT ? AS v", Params: []any{7}, AllowLocal: true},
		{DBType: TypeKV, ConnectionURL: kvURL, Operation: "get", Key: unique("svc_absent"), AllowLocal: true},
	} {
		d, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 6)
		for range 6 {
			go func() {
				_, err := d.Run(t.Context(), nodetest.New(nil))
				errs <- err
			}()
		}
		for range 6 {
			if err := <-errs; err != nil {
				t.Errorf("%s concurrent run: %v", o.DBType, err)
			}
		}
	}
}
