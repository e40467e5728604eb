package database

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestPostgresDecoding(t *testing.T) {
	t.Parallel()
	mood := unique("mood")
	admin(t, sqlConf(TypePostgres, pgURL, "execute", "CREATE TYPE "+mood+" AS ENUM ('sad', 'happy')"))
	t.Cleanup(func() { admin(t, sqlConf(TypePostgres, pgURL, "execute", "DROP TYPE "+mood)) })

	q := `SELECT 12345678901234567890.123456789::numeric AS num, 'NaN'::numeric AS num_nan, 'Infinity'::numeric AS num_inf,
		'NaN'::float8 AS f_nan, '-Infinity'::float8 AS f_ninf, 1.5::float8 AS f, 1.1::float4 AS f4,
		DATE '2024-01-02' AS d, TIMESTAMP '2024-01-02 03:04:05.5' AS ts, TIMESTAMPTZ '2024-01-02 03:04:05+02' AS tstz,
		TIME '03:04:05' AS t, TIMETZ '03:04:05+02' AS ttz, INTERVAL '1 day 2 hours' AS iv,
		'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u, '{"a":[1,2.5],"b":null}'::jsonb AS jb, '[true]'::json AS j,
		'happy'::` + mood + ` AS mood, ARRAY['sad']::` + mood + `[] AS moods, point(1,2) AS p, 'a & b'::tsquery AS tq,
		9007199254740993::int8 AS big, 42::int2 AS small, true AS b, decode('0102', 'hex') AS bytes,
		ARRAY[1,2,NULL] AS ints, ARRAY['a b','c"d'] AS texts, '10.0.0.0/8'::cidr AS net, NULL::text AS nothing,
		1 AS dup, 2 AS dup`
	env := nodetest.New(nil)
	env.AdminCaller = true
	raw := sqlConf(TypePostgres, pgURL, "query", q)
	raw["allow_raw_sql"] = true
	out, err := runNode(t, raw, env)
	if err != nil {
		t.Fatalf("decoding query: %v", err)
	}
	rows := rowsOf(t, out)
	if len(rows) != 1 {
		t.Fatalf("rows = %v; want one", rows)
	}
	want := map[string]any{
		"num": "12345678901234567890.123456789", "num_nan": "NaN", "num_inf": "Infinity",
		"f_nan": "NaN", "f_ninf": "-Infinity", "f": 1.5, "f4": 1.1,
		"d": "2024-01-02", "ts": "2024-01-02T03:04:05.5", "tstz": "2024-01-02T01:04:05+00:00",
		"t": "03:04:05", "ttz": "03:04:05+02:00", "iv": "P1DT2H",
		"u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "jb": map[string]any{"a": []any{1, 2.5}, "b": nil}, "j": []any{true},
		"mood": "happy", "moods": []any{"sad"}, "p": "(unsupported type: point)", "tq": "(unsupported type: tsquery)",
		"big": 9007199254740993, "small": 42, "b": true, "bytes": "AQI=",
		"ints": []any{1, 2, nil}, "texts": []any{"a b", `c"d`}, "net": "10.0.0.0/8", "nothing": nil, "dup": 2,
	}
	for k, w := range want {
		if got := rows[0][k]; !reflect.DeepEqual(got, w) {
			t.Errorf("column %s = %#v (%T); want %#v (%T)", k, got, got, w, w)
		}
	}
	if cols := out["columns"].([]any); len(cols) != 30 || cols[0] != "num" || cols[29] != "dup" {
		t.Errorf("columns = %v; want the 30 names in order", cols)
	}
	for _, code := range []string{LogPrecision, LogDuplicateColumn} {
		if !env.Logged("code=" + code) {
			t.Errorf("log = %q; want a %s line", env.Log(), code)
		}
	}
}

func TestPostgresQueryAndExecute(t *testing.T) {
	t.Parallel()
	tbl := unique("items")
	admin(t, sqlConf(TypePostgres, pgURL, "execute", "CREATE TABLE "+tbl+" (id serial PRIMARY KEY, name text NOT NULL, price numeric(10,2))"))
	t.Cleanup(func() { admin(t, sqlConf(TypePostgres, pgURL, "execute", "DROP TABLE "+tbl)) })

	out := mustRun(t, sqlConf(TypePostgres, pgURL, "execute", "INSERT INTO "+tbl+" (name, price) VALUES (?, ?), (?, ?) RETURNING id, name", "pen", 1.5, "ink", "2.25"))
	if rows := rowsOf(t, out); len(rows) != 2 || rows[0]["id"] != 1 || rows[1]["name"] != "ink" {
		t.Errorf("insert returning rows = %v; want ids 1, 2", rows)
	}
	if out["rows_affected"] != 2 || out["last_insert_id"] != 0 || out["truncated"] != false {
		t.Errorf("insert: rows_affected %v, last_insert_id %v, truncated %v; want 2, 0, false", out["rows_affected"], out["last_insert_id"], out["truncated"])
	}
	out = mustRun(t, sqlConf(TypePostgres, pgURL, "execute", "UPDATE "+tbl+" SET price = price * ? WHERE name <> ?", 2, "nothing"))
	if out["rows_affected"] != 2 || len(rowsOf(t, out)) != 0 {
		t.Errorf("update: rows_affected %v rows %v; want 2 and none", out["rows_affected"], out["rows"])
	}
	out = mustRun(t, sqlConf(TypePostgres, pgURL, "query", "SELECT name, price FROM "+tbl+" WHERE price > ? ORDER BY id", 1))
	want := []map[string]any{{"name": "pen", "price": "3.00"}, {"name": "ink", "price": "4.50"}}
	if rows := rowsOf(t, out); !reflect.DeepEqual(rows, want) || out["rows_affected"] != 0 {
		t.Errorf("query rows = %v, rows_affected %v; want %v, 0", rows, out["rows_affected"], want)
	}
	if cols := out["columns"]; !reflect.DeepEqual(cols, []any{"name", "price"}) {
		t.Errorf("columns = %v; want [name price]", cols)
	}
	out = mustRun(t, sqlConf(TypePostgres, pgURL, "query", "SELECT count(*) AS n FROM "+tbl+" WHERE name = ?", nil))
	if rows := rowsOf(t, out); rows[0]["n"] != 0 {
		t.Errorf("null parameter: count = %v; want 0", rows[0]["n"])
	}
	_, err := runNode(t, sqlConf(TypePostgres, pgURL, "execute", "INSERT INTO "+tbl+" (name) VALUES (?)", nil), nodetest.New(nil))
	wantCode(t, "not-null violation", err, node.CodeDBError, "")
	if retryOf(err) != node.NoRetry {
		t.Errorf("a server error is retryable; want not")
	}
	_, err = runNode(t, sqlConf(TypePostgres, pgURL, "query", "SELECT * FROM "+tbl+"_missing"), nodetest.New(nil))
	wantCode(t, "missing table", err, node.CodeDBError, "")
}

// TestPostgresReadOnlyEnforced: a read that writes through a function
// passes the lexer and is stopped by the read-only transaction; and with
// the lexer bypassed, a plain INSERT is stopped the same way.
func TestPostgresReadOnlyEnforced(t *testing.T) {
	t.Parallel()
	tbl, fn := unique("ro"), unique("writes")
	admin(t, sqlConf(TypePostgres, pgURL, "execute", "CREATE TABLE "+tbl+" (a int)"))
	admin(t, sqlConf(TypePostgres, pgURL, "execute", "CREATE FUNCTION "+fn+"() RETURNS int LANGUAGE sql AS $$ INSERT INTO "+tbl+" VALUES (1) RETURNING a $$"))
	t.Cleanup(func() {
		admin(t, sqlConf(TypePostgres, pgURL, "execute", "DROP FUNCTION "+fn))
		admin(t, sqlConf(TypePostgres, pgURL, "execute", "DROP TABLE "+tbl))
	})
	_, err := runNode(t, sqlConf(TypePostgres, pgURL, "query", "SELECT "+fn+"()"), nodetest.New(nil))
	wantCode(t, "function that writes", err, CodeNotReadOnly, "query")

	d, err := New(Options{DBType: TypePostgres, ConnectionURL: pgURL, Query: "SELECT 1", AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	d.stmt.text = "INSERT INTO " + tbl + " VALUES (2)"
	_, err = d.Run(t.Context(), nodetest.New(nil))
	wantCode(t, "INSERT past the lexer", err, CodeNotReadOnly, "query")
	out := mustRun(t, sqlConf(TypePostgres, pgURL, "query", "SELECT count(*) AS n FROM "+tbl))
	if n := rowsOf(t, out)[0]["n"]; n != 0 {
		t.Errorf("rows written by refused queries = %v; want 0", n)
	}
}

func TestPostgresLimits(t *testing.T) {
	t.Parallel()
	series := "SELECT n FROM generate_series(1, ?) AS n"
	out := mustRun(t, sqlConf(TypePostgres, pgURL, "query", series, DefaultMaxRows))
	if n := len(rowsOf(t, out)); n != DefaultMaxRows {
		t.Errorf("query of %d rows returned %d", DefaultMaxRows, n)
	}
	_, err := runNode(t, sqlConf(TypePostgres, pgURL, "query", series, DefaultMaxRows+1), nodetest.New(nil))
	wantCode(t, "query of 100,001 rows", err, CodeRowLimitExceeded, "")

	env := nodetest.New(nil)
	out, err = runNode(t, sqlConf(TypePostgres, pgURL, "execute", series, DefaultMaxRows+1), env)
	if err != nil {
		t.Fatalf("execute of 100,001 rows: %v", err)
	}
	if rows := rowsOf(t, out); len(rows) != DefaultMaxRows || out["truncated"] != true || rows[len(rows)-1]["n"] != DefaultMaxRows {
		t.Errorf("execute of 100,001 rows: %d rows, truncated %v; want %d, true", len(rows), out["truncated"], DefaultMaxRows)
	}
	if !env.Logged("code=" + LogResultTruncated) {
		t.Errorf("log = %q; want RESULT_TRUNCATED", env.Log())
	}
	testByteLimit(t, TypePostgres, pgURL, "SELECT ? AS v FROM generate_series(1, 5)")
}

// testByteLimit runs a query of five rows of 11 bytes each ("v" and ten
// characters) at the byte limit and one byte under it.
func testByteLimit(t *testing.T, dbType, target, query string) {
	t.Helper()
	run := func(op string, maxBytes int64) (map[string]any, error, *nodetest.Env) {
		o := Options{DBType: dbType, Query: query, Params: []any{"xxxxxxxxxx"}, Operation: op, AllowLocal: true, Limits: Limits{MaxBytes: maxBytes}}
		if dbType == TypeEmbedded {
			o.DBPath = target
		} else {
			o.ConnectionURL = target
		}
		d, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		env := nodetest.New(nil)
		res, err := d.Run(t.Context(), env)
		out, _ := res.Output.(map[string]any)
		return out, err, env
	}
	if out, err, _ := run("query", 55); err != nil || len(rowsOf(t, out)) != 5 {
		t.Errorf("%s: 55 bytes under a 55-byte limit = %v, %v; want 5 rows", dbType, out, err)
	}
	_, err, _ := run("query", 54)
	wantCode(t, dbType+": 55 bytes under a 54-byte limit", err, CodeRowLimitExceeded, "")
	out, err, env := run("execute", 54)
	if err != nil || len(rowsOf(t, out)) != 4 || out["truncated"] != true || !env.Logged(LogResultTruncated) {
		t.Errorf("%s: execute over the byte limit = %v, %v; want 4 rows, truncated, logged", dbType, out, err)
	}
}

func TestPostgresCancel(t *testing.T) {
	t.Parallel()
	app := unique("svc_cancel")
	url := pgURL + "&application_name=" + app
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := nodetest.Run(ctx, Spec(), sqlConf(TypePostgres, url, "query", "SELECT pg_sleep(?)", 30), nodetest.New(nil))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query error = %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled query returned after %v; want well under 5s", d)
	}
	// The server stops the statement (cancel request), not only the client.
	deadline := time.Now().Add(3 * time.Second)
	for {
		out := mustRun(t, sqlConf(TypePostgres, pgURL, "query", "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = ? AND state = ?", app, "active"))
		if rowsOf(t, out)[0]["n"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled statement is still running on the server")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPostgresConnectionFailed(t *testing.T) {
	t.Parallel()
	_, err := runNode(t, sqlConf(TypePostgres, closedPG, "query", "SELECT 1"), nodetest.New(nil))
	wantCode(t, "closed port", err, CodeConnectionFailed, "")
	if retryOf(err) != node.Retryable {
		t.Errorf("a connection that cannot be made is not retryable; want retryable")
	}
	if strings.Contains(err.Error(), "password") {
		t.Errorf("error %q mentions the password", err)
	}
}
