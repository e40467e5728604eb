package database

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestMySQLDecoding(t *testing.T) {
	t.Parallel()
	tbl := unique("types")
	admin(t, sqlConf(TypeMySQL, myURL, "execute", "CREATE TABLE "+tbl+` (id INT AUTO_INCREMENT PRIMARY KEY,
		n DECIMAL(30,10), d DATE, dt DATETIME(3), ts TIMESTAMP NULL, tm TIME, j JSON, e ENUM('small','large'), st SET('a','b'),
		u UUID, f FLOAT, db DOUBLE, big BIGINT, ubig BIGINT UNSIGNED, bi BIT(8), bl BLOB, g POINT, y YEAR, c CHAR(3), nothing INT)`))
	t.Cleanup(func() { admin(t, sqlConf(TypeMySQL, myURL, "execute", "DROP TABLE "+tbl)) })
	admin(t, sqlConf(TypeMySQL, myURL, "execute", "INSERT INTO "+tbl+` (n, d, dt, ts, tm, j, e, st, u, f, db, big, ubig, bi, bl, g, y, c)
		VALUES (12345678901234567890.0123456789, '2024-01-02', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05', '-03:04:05',
		'{"a": [1, 2.5]}', 'large', 'a,b', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.1, 2.2, 9007199254740993,
		18446744073709551615, b'101', x'0102', POINT(1, 2), 2024, 'abc')`))

	want := map[string]any{
		"id": 1, "n": "12345678901234567890.0123456789", "d": "2024-01-02", "dt": "2024-01-02T03:04:05.123",
		"ts": "2024-01-02T03:04:05", "tm": "-03:04:05", "e": "large", "st": "a,b", "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"f": 1.1, "db": 2.2, "big": 9007199254740993, "ubig": "18446744073709551615", "bi": 5, "bl": "AQI=",
		"g": "(unsupported type: geometry)", "y": 2024, "c": "abc", "nothing": nil,
		// MariaDB stores JSON as LONGTEXT and reports it so: it reads as
		// text there (MySQL reports JSON, which reads as a value).
		"j": `{"a": [1, 2.5]}`,
	}
	// Without parameters the driver uses the text protocol; with them, the
	// binary one: both must decode the same.
	for _, params := range [][]any{nil, {0}} {
		query := "SELECT * FROM " + tbl
		if params != nil {
			query += " WHERE id > ?"
		}
		env := nodetest.New(nil)
		out, err := runNode(t, sqlConf(TypeMySQL, myURL, "query", query, params...), env)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		rows := rowsOf(t, out)
		if len(rows) != 1 {
			t.Fatalf("%s: rows = %v; want one", query, rows)
		}
		for k, w := range want {
			if got := rows[0][k]; !reflect.DeepEqual(got, w) {
				t.Errorf("%s: column %s = %#v (%T); want %#v (%T)", query, k, got, got, w, w)
			}
		}
		if !env.Logged("code=" + LogPrecision) {
			t.Errorf("%s: log = %q; want a PRECISION line", query, env.Log())
		}
	}
	rs := newResultSet(Limits{MaxRows: 1, MaxBytes: 1}, false, nodetest.New(nil).Logger())
	rs.columns = []string{"j"}
	if got := decodeMySQL(rs, 0, "JSON", []byte(`{"a":[1,2.5]}`)); !reflect.DeepEqual(got, map[string]any{"a": []any{1, 2.5}}) {
		t.Errorf("decodeMySQL(JSON) = %#v; want the parsed value", got)
	}
	env := nodetest.New(nil)
	out, err := runNode(t, sqlConf(TypeMySQL, myURL, "query", "SELECT 1 AS a, 2 AS a"), env)
	if err != nil || rowsOf(t, out)[0]["a"] != 2 || !env.Logged("code="+LogDuplicateColumn) {
		t.Errorf("duplicate columns = %v, %v, log %q; want a = 2 and a DUPLICATE_COLUMN line", out, err, env.Log())
	}
}

func TestMySQLQueryAndExecute(t *testing.T) {
	t.Parallel()
	tbl := unique("items")
	admin(t, sqlConf(TypeMySQL, myURL, "execute", "CREATE TABLE "+tbl+" (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT)"))
	t.Cleanup(func() { admin(t, sqlConf(TypeMySQL, myURL, "execute", "DROP TABLE "+tbl)) })

	out := mustRun(t, sqlConf(TypeMySQL, myURL, "execute", "INSERT INTO "+tbl+" (name, qty) VALUES (?, ?), (?, ?)", "pen", 1, "ink", true))
	if out["rows_affected"] != 2 || out["last_insert_id"] != 1 || len(rowsOf(t, out)) != 0 {
		t.Errorf("insert: %v; want rows_affected 2, last_insert_id 1 (the first id of the batch), no rows", out)
	}
	out = mustRun(t, sqlConf(TypeMySQL, myURL, "execute", "INSERT INTO "+tbl+" (name, qty) VALUES (?, ?)", "cap", 3))
	if out["last_insert_id"] != 3 {
		t.Errorf("insert: last_insert_id %v; want 3", out["last_insert_id"])
	}
	out = mustRun(t, sqlConf(TypeMySQL, myURL, "execute", "INSERT INTO "+tbl+" (name) VALUES (?) RETURNING id, name", "box"))
	if rows := rowsOf(t, out); len(rows) != 1 || rows[0]["id"] != 4 || out["rows_affected"] != 1 {
		t.Errorf("insert returning: %v; want id 4, rows_affected 1", out)
	}
	out = mustRun(t, sqlConf(TypeMySQL, myURL, "execute", "UPDATE "+tbl+" SET qty = qty + ? WHERE qty IS NOT NULL", 10))
	if out["rows_affected"] != 3 {
		t.Errorf("update: rows_affected %v; want 3", out["rows_affected"])
	}
	out = mustRun(t, sqlConf(TypeMySQL, myURL, "query", "SELECT name, qty FROM "+tbl+" WHERE qty > ? ORDER BY id", 11))
	want := []map[string]any{{"name": "cap", "qty": 13}}
	if rows := rowsOf(t, out); !reflect.DeepEqual(rows, want) {
		t.Errorf("query rows = %v; want %v", rows, want)
	}
	_, err := runNode(t, sqlConf(TypeMySQL, myURL, "execute", "INSERT INTO "+tbl+" (name) VALUES (?)", nil), nodetest.New(nil))
	wantCode(t, "not-null violation", err, node.CodeDBError, "")
}

func TestMySQLReadOnlyEnforced(t *testing.T) {
	t.Parallel()
	tbl := unique("ro")
	admin(t, sqlConf(TypeMySQL, myURL, "execute", "CREATE TABLE "+tbl+" (a INT)"))
	t.Cleanup(func() { admin(t, sqlConf(TypeMySQL, myURL, "execute", "DROP TABLE "+tbl)) })
	d, err := New(Options{DBType: TypeMySQL, ConnectionURL: myURL, Query: "SELECT 1", AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	d.stmt.text = "INSERT INTO " + tbl + " VALUES (2)"
	_, err = d.Run(t.Context(), nodetest.New(nil))
	wantCode(t, "INSERT past the lexer", err, CodeNotReadOnly, "query")
	out := mustRun(t, sqlConf(TypeMySQL, myURL, "query", "SELECT COUNT(*) AS n FROM "+tbl))
	if n := rowsOf(t, out)[0]["n"]; n != 0 {
		t.Errorf("rows written by a refused query = %v; want 0", n)
	}
}

func TestMySQLLimits(t *testing.T) {
	t.Parallel()
	// MariaDB stops recursive CTEs at 1,000 iterations by default: cross
	// join digits instead.
	digits := "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	series := "SELECT a.d + 10 * b.d AS n FROM " + digits + " a, " + digits + " b, " + digits + " c, " + digits + " e, " + digits + " f, " + digits + " g LIMIT ?"
	out := mustRun(t, sqlConf(TypeMySQL, myURL, "query", series, DefaultMaxRows))
	if n := len(rowsOf(t, out)); n != DefaultMaxRows {
		t.Errorf("query of %d rows returned %d", DefaultMaxRows, n)
	}
	_, err := runNode(t, sqlConf(TypeMySQL, myURL, "query", series, DefaultMaxRows+1), nodetest.New(nil))
	wantCode(t, "query of 100,001 rows", err, CodeRowLimitExceeded, "")
	env := nodetest.New(nil)
	out, err = runNode(t, sqlConf(TypeMySQL, myURL, "execute", series, DefaultMaxRows+1), env)
	if err != nil || len(rowsOf(t, out)) != DefaultMaxRows || out["truncated"] != true || !env.Logged(LogResultTruncated) {
		t.Errorf("execute of 100,001 rows = %v rows, truncated %v, %v; want %d rows, truncated, logged", len(rowsOf(t, out)), out["truncated"], err, DefaultMaxRows)
	}
	testByteLimit(t, TypeMySQL, myURL, "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 5) SELECT ? AS v FROM s")
}

func TestMySQLCancel(t *testing.T) {
	t.Parallel()
	probe := unique("cancel_probe")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := nodetest.Run(ctx, Spec(), sqlConf(TypeMySQL, myURL, "query", "SELECT SLEEP(?) AS "+probe, 30), nodetest.New(nil))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query error = %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled query returned after %v", d)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		out := mustRun(t, sqlConf(TypeMySQL, myURL, "query", "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE ?", "%"+probe+"%"))
		if rowsOf(t, out)[0]["n"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled statement is still running on the server")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMySQLPassword: the password field replaces the URL's (root has an
// empty password here, so any password fails to log in).
func TestMySQLPassword(t *testing.T) {
	t.Parallel()
	raw := sqlConf(TypeMySQL, myURL, "query", "SELECT 1")
	raw["password"] = "not-the-password"
	_, err := runNode(t, raw, nodetest.New(nil))
	wantCode(t, "wrong password", err, node.CodeDBError, "")
	_, err = runNode(t, sqlConf(TypeMySQL, closedMySQL, "query", "SELECT 1"), nodetest.New(nil))
	wantCode(t, "closed port", err, CodeConnectionFailed, "")
	if retryOf(err) != node.Retryable {
		t.Errorf("closed port: not retryable; want retryable")
	}
}
