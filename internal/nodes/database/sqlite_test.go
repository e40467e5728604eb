package database

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// newSQLite returns the path of a database holding table t.
func newSQLite(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "odd name?#%.sqlite3")
	mustRun(t, sqlConf(TypeEmbedded, p, "execute",
		"CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, born DATE, seen DATETIME, doc JSON, raw BLOB)"))
	return p
}

func TestSQLiteQueryAndExecute(t *testing.T) {
	t.Parallel()
	p := newSQLite(t)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the database file was not created at its path: %v", err)
	}
	out := mustRun(t, sqlConf(TypeEmbedded, p, "execute",
		"INSERT INTO t (name, price, born, seen, doc, raw) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)",
		"pen", 1.5, "2024-01-02", "2024-01-02 03:04:05", map[string]any{"a": 1}, nil,
		"ink", 2.5, nil, nil, "[1,2]", nil))
	if out["rows_affected"] != 2 || out["last_insert_id"] != 2 || len(rowsOf(t, out)) != 0 {
		t.Errorf("insert: %v; want rows_affected 2, last_insert_id 2", out)
	}
	out = mustRun(t, sqlConf(TypeEmbedded, p, "execute", "UPDATE t SET price = price * ? WHERE name = ? RETURNING id, price", 2, "pen"))
	if rows := rowsOf(t, out); len(rows) != 1 || rows[0]["price"] != 3.0 || out["rows_affected"] != 1 {
		t.Errorf("update returning: %v; want price 3, rows_affected 1", out)
	}
	env := nodetest.New(nil)
	out, err := runNode(t, sqlConf(TypeEmbedded, p, "query", "SELECT id, name, price, born, seen, doc, raw, 1e999 AS inf, zeroblob(2) AS b FROM t ORDER BY id"), env)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"id": 1, "name": "pen", "price": 3.0, "born": "2024-01-02", "seen": "2024-01-02T03:04:05Z", "doc": map[string]any{"a": 1}, "raw": nil, "inf": "Infinity", "b": "AAA="},
		{"id": 2, "name": "ink", "price": 2.5, "born": nil, "seen": nil, "doc": []any{1, 2}, "raw": nil, "inf": "Infinity", "b": "AAA="},
	}
	if rows := rowsOf(t, out); !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %v; want %v", rows, want)
	}
	env = nodetest.New(nil)
	if _, err := runNode(t, sqlConf(TypeEmbedded, p, "query", "SELECT id AS a, name AS a FROM t WHERE id = ?", 1), env); err != nil || !env.Logged(LogDuplicateColumn) {
		t.Errorf("duplicate columns: %v, log %q; want a DUPLICATE_COLUMN line", err, env.Log())
	}
	env = nodetest.New(nil)
	if _, err := runNode(t, sqlConf(TypeEmbedded, p, "query", "SELECT ? + 0 AS big", 9007199254740993), env); err != nil || !env.Logged(LogPrecision) {
		t.Errorf("big integer: %v, log %q; want a PRECISION line", err, env.Log())
	}
	if _, err := runNode(t, sqlConf(TypeEmbedded, p, "query", "SELECT * FROM pragma_table_info(?)", "t"), nodetest.New(nil)); err != nil {
		t.Errorf("pragma_table_info: %v; want it allowed in a query", err)
	}
	_, err = runNode(t, sqlConf(TypeEmbedded, filepath.Join(t.TempDir(), "missing.db"), "query", "SELECT 1"), nodetest.New(nil))
	wantCode(t, "query of a missing file", err, node.CodeDBError, "db_path")
}

// TestSQLiteEnforcement: with the lexer bypassed, the database itself
// refuses writes in a query, and ATTACH, DETACH and VACUUM INTO in an
// execute.
func TestSQLiteEnforcement(t *testing.T) {
	t.Parallel()
	p := newSQLite(t)
	other := filepath.Join(t.TempDir(), "other.db")
	bypass := func(op, text string) error {
		d, err := New(Options{DBPath: p, Query: "SELECT 1", Operation: op})
		if err != nil {
			t.Fatal(err)
		}
		d.stmt.text = text
		_, err = d.Run(t.Context(), nodetest.New(nil))
		return err
	}
	for _, q := range []string{"INSERT INTO t (name) VALUES ('x')", "DELETE FROM t", "CREATE TABLE u (a)", "PRAGMA user_version = 5", "BEGIN"} {
		wantCode(t, "query "+q+" past the lexer", bypass("query", q), CodeNotReadOnly, "query")
	}
	for _, q := range []string{"ATTACH '" + other + "' AS o", "VACUUM INTO '" + other + "'"} {
		wantCode(t, "execute "+q+" past the lexer", bypass("execute", q), CodeStatementNotAllowed, "query")
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("%s was written", other)
	}
	if err := bypass("execute", "VACUUM"); err != nil {
		t.Errorf("plain VACUUM: %v; want it allowed", err)
	}
	// Through the node, the lexer refuses them first.
	for _, q := range []string{"ATTACH ? AS o", "DETACH o", "VACUUM INTO ?"} {
		var params []any
		if q != "DETACH o" {
			params = []any{other}
		}
		_, err := runNode(t, sqlConf(TypeEmbedded, p, "execute", q, params...), nodetest.New(nil))
		wantCode(t, "execute "+q, err, CodeStatementNotAllowed, "query")
	}
}

func TestSQLiteLimits(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "limits.db")
	series := "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) SELECT n FROM s"
	out := mustRun(t, sqlConf(TypeEmbedded, p, "execute", series, 1)) // creates the file
	out = mustRun(t, sqlConf(TypeEmbedded, p, "query", series, DefaultMaxRows))
	if n := len(rowsOf(t, out)); n != DefaultMaxRows {
		t.Errorf("query of %d rows returned %d", DefaultMaxRows, n)
	}
	_, err := runNode(t, sqlConf(TypeEmbedded, p, "query", series, DefaultMaxRows+1), nodetest.New(nil))
	wantCode(t, "query of 100,001 rows", err, CodeRowLimitExceeded, "")
	env := nodetest.New(nil)
	out, err = runNode(t, sqlConf(TypeEmbedded, p, "execute", series, DefaultMaxRows+1), env)
	if err != nil || len(rowsOf(t, out)) != DefaultMaxRows || out["truncated"] != true || out["rows_affected"] != 0 || !env.Logged(LogResultTruncated) {
		t.Errorf("execute of 100,001 rows = %d rows, %v, %v; want %d rows, truncated, rows_affected 0, logged", len(rowsOf(t, out)), out["truncated"], err, DefaultMaxRows)
	}
	testByteLimit(t, TypeEmbedded, p, "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 5) SELECT ? AS v FROM s")
}

func TestSQLiteCancel(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "cancel.db")
	mustRun(t, sqlConf(TypeEmbedded, p, "execute", "CREATE TABLE x (a)"))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := nodetest.Run(ctx, Spec(), sqlConf(TypeEmbedded, p, "query",
		"WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s) SELECT count(*) FROM s"), nodetest.New(nil))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query error = %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled query returned after %v", d)
	}
}
