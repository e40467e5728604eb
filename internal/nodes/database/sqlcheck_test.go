package database

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node/nodetest"
)

type refusal struct {
	d      dialect
	query  string
	params []any
	code   string
}

// queryRefusals are statements the query operation must refuse before
// connecting. Statements with string literals run with allow_raw_sql on
// (as an admin), so that what refuses them is the read-only check.
var queryRefusals = []refusal{
	// PostgreSQL
	{dialectPostgres, "SELECT 1; DROP TABLE t", nil, CodeNotReadOnly},
	{dialectPostgres, "TABLE t; TABLE u", nil, CodeNotReadOnly},
	{dialectPostgres, "select 1;;", nil, CodeNotReadOnly},
	{dialectPostgres, "(SELECT 1); (SELECT 2)", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT * INTO newt FROM t", nil, CodeNotReadOnly},
	{dialectPostgres, "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", nil, CodeNotReadOnly},
	{dialectPostgres, "WITH x AS (INSERT INTO t VALUES (1) RETURNING a) SELECT * FROM x", nil, CodeNotReadOnly},
	{dialectPostgres, "WITH x AS (UPDATE t SET a = 1 RETURNING a) SELECT * FROM x", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT $$x$$", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT $q$ ; DROP TABLE t; $q$", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT 1 -- trailing comment", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT /* c */ 1", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT /* /* nested */ ; DROP TABLE t; */ 1", nil, CodeNotReadOnly},
	{dialectPostgres, `SELECT E'\'; DROP TABLE t; --'`, nil, CodeNotReadOnly},
	{dialectPostgres, `SELECT 'a\' ; DROP TABLE t`, nil, CodeNotReadOnly},
	{dialectPostgres, "EXPLAIN ANALYZE DELETE FROM t", nil, CodeNotReadOnly},
	{dialectPostgres, "EXPLAIN (ANALYZE, BUFFERS) SELECT 1", nil, CodeNotReadOnly},
	{dialectPostgres, "EXPLAIN ANALYSE SELECT 1", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT * FROM t FOR UPDATE", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT * FROM t FOR NO KEY UPDATE", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT * FROM t FOR SHARE", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT * FROM t FOR KEY SHARE SKIP LOCKED", nil, CodeNotReadOnly},
	{dialectPostgres, "INSERT INTO t VALUES (1)", nil, CodeNotReadOnly},
	{dialectPostgres, "UPDATE t SET a = 1", nil, CodeNotReadOnly},
	{dialectPostgres, "DELETE FROM t", nil, CodeNotReadOnly},
	{dialectPostgres, "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE", nil, CodeNotReadOnly},
	{dialectPostgres, "CREATE TABLE t AS SELECT 1", nil, CodeNotReadOnly},
	{dialectPostgres, "TRUNCATE t", nil, CodeNotReadOnly},
	{dialectPostgres, "COPY t TO PROGRAM 'id'", nil, CodeNotReadOnly},
	{dialectPostgres, "SET search_path = evil", nil, CodeNotReadOnly},
	{dialectPostgres, "DO $$ BEGIN END $$", nil, CodeNotReadOnly},
	{dialectPostgres, "CALL p()", nil, CodeNotReadOnly},
	{dialectPostgres, "LISTEN ch", nil, CodeNotReadOnly},
	{dialectPostgres, "VACUUM t", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT nextval(?)", []any{"s"}, CodeNotReadOnly},
	{dialectPostgres, "SELECT pg_terminate_backend(?)", []any{1}, CodeNotReadOnly},
	{dialectPostgres, "SELECT set_config(?, ?, false)", []any{"a", "b"}, CodeNotReadOnly},
	{dialectPostgres, "SELECT pg_advisory_lock(1)", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT lo_import(?)", []any{"/etc/passwd"}, CodeNotReadOnly},
	{dialectPostgres, "SELECT dblink_exec(?, ?)", []any{"a", "b"}, CodeNotReadOnly},
	{dialectPostgres, "SELECT pg_read_file(?)", []any{"/etc/passwd"}, CodeNotReadOnly},
	{dialectPostgres, "(((", nil, CodeNotReadOnly},
	{dialectPostgres, "SELECT $1", nil, CodeInvalidQuery},
	{dialectPostgres, "SELECT 'unterminated", nil, CodeInvalidQuery},
	{dialectPostgres, "SELECT 1 /* unterminated", nil, CodeInvalidQuery},
	{dialectPostgres, "SELECT $a$ unterminated", nil, CodeInvalidQuery},
	{dialectPostgres, "SELECT 1\x00; DROP TABLE t", nil, CodeInvalidQuery},
	{dialectPostgres, " ; ", nil, CodeInvalidQuery},
	// MySQL and MariaDB
	{dialectMySQL, "SELECT * FROM t INTO OUTFILE '/tmp/x'", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT a INTO DUMPFILE '/tmp/x' FROM t", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT * INTO @v FROM t", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT 1 # comment", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT 1 -- comment", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT 1--1", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT /*! 1 */", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT /*M!100000 1 */", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT /*+ MAX_EXECUTION_TIME(1) */ 1", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT * FROM t LOCK IN SHARE MODE", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT * FROM t FOR UPDATE", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT * FROM t FOR SHARE", nil, CodeNotReadOnly},
	{dialectMySQL, `SELECT "a\"; DROP TABLE t; -- "`, nil, CodeNotReadOnly},
	{dialectMySQL, `SELECT 'a\'; DROP TABLE t; -- '`, nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT `a\\b` FROM t", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT LOAD_FILE(?)", []any{"/etc/passwd"}, CodeNotReadOnly},
	{dialectMySQL, "SELECT GET_LOCK(?, 10)", []any{"x"}, CodeNotReadOnly},
	{dialectMySQL, "HANDLER t OPEN", nil, CodeNotReadOnly},
	{dialectMySQL, "DO SLEEP(1)", nil, CodeNotReadOnly},
	{dialectMySQL, "REPLACE INTO t VALUES (1)", nil, CodeNotReadOnly},
	{dialectMySQL, "LOAD DATA LOCAL INFILE ? INTO TABLE t", []any{"/etc/passwd"}, CodeNotReadOnly},
	{dialectMySQL, "SELECT * FROM t PROCEDURE ANALYSE()", nil, CodeNotReadOnly},
	{dialectMySQL, "WITH x AS (SELECT 1) UPDATE t SET a = 1", nil, CodeNotReadOnly},
	{dialectMySQL, "SHOW TABLES; DROP TABLE t", nil, CodeNotReadOnly},
	{dialectMySQL, "ANALYZE SELECT 1", nil, CodeNotReadOnly},
	{dialectMySQL, "EXPLAIN ANALYZE SELECT 1", nil, CodeNotReadOnly},
	{dialectMySQL, "SET autocommit = 0", nil, CodeNotReadOnly},
	{dialectMySQL, "GRANT ALL ON *.* TO x", nil, CodeNotReadOnly},
	{dialectMySQL, "SELECT 'x", nil, CodeInvalidQuery},
	// SQLite
	{dialectSQLite, "ATTACH DATABASE ? AS x", []any{"/tmp/x.db"}, CodeNotReadOnly},
	{dialectSQLite, "SELECT 1 FROM t; ATTACH ? AS x", []any{"/tmp/x.db"}, CodeNotReadOnly},
	{dialectSQLite, "PRAGMA writable_schema = 1", nil, CodeNotReadOnly},
	{dialectSQLite, "SELECT 1; SELECT 2", nil, CodeNotReadOnly},
	{dialectSQLite, "VACUUM INTO ?", []any{"/tmp/copy.db"}, CodeNotReadOnly},
	{dialectSQLite, "SELECT load_extension(?)", []any{"/tmp/x.so"}, CodeNotReadOnly},
	{dialectSQLite, "SELECT [a\\b] FROM t", nil, CodeNotReadOnly},
	{dialectSQLite, "INSERT INTO t DEFAULT VALUES", nil, CodeNotReadOnly},
	{dialectSQLite, "CREATE TEMP TABLE x AS SELECT 1", nil, CodeNotReadOnly},
	{dialectSQLite, "SELECT 1 -- c", nil, CodeNotReadOnly},
	{dialectSQLite, "WITH x AS (SELECT 1) DELETE FROM t", nil, CodeNotReadOnly},
	{dialectSQLite, "SELECT * FROM t RETURNING *", nil, CodeNotReadOnly},
	{dialectSQLite, "SELECT :name", nil, CodeInvalidQuery},
	{dialectSQLite, "SELECT ?1", nil, CodeInvalidQuery},
	{dialectSQLite, "SELECT @v, $w", nil, CodeInvalidQuery},
	{dialectSQLite, "SELECT [unterminated", nil, CodeInvalidQuery},
}

// refusalConf is a config whose database is never reached: a closed port,
// or an embedded path that does not exist.
func refusalConf(t *testing.T, d dialect, query string, params []any) map[string]any {
	var raw map[string]any
	switch d {
	case dialectPostgres:
		raw = sqlConf(TypePostgres, closedPG, "query", query, params...)
	case dialectMySQL:
		raw = sqlConf(TypeMySQL, closedMySQL, "query", query, params...)
	default:
		raw = sqlConf(TypeEmbedded, filepath.Join(t.TempDir(), "never.db"), "query", query, params...)
	}
	raw["allow_raw_sql"] = true
	return raw
}

// TestQueryRefusals runs each refused statement through the node: it must
// fail with its code, naming the query, before any connection (a connection
// to the closed port would fail CONNECTION_FAILED instead).
func TestQueryRefusals(t *testing.T) {
	t.Parallel()
	count := map[dialect]int{}
	for _, tt := range queryRefusals {
		count[tt.d]++
		env := nodetest.New(nil)
		env.AdminCaller = true
		raw := refusalConf(t, tt.d, tt.query, tt.params)
		_, err := runNode(t, raw, env)
		what := tt.d.String() + " query " + strings.ReplaceAll(tt.query, "\x00", `\0`)
		wantCode(t, what, err, tt.code, "query")
		if p, ok := raw["db_path"].(string); ok {
			if _, serr := os.Stat(p); serr == nil {
				t.Errorf("%s created %s", what, p)
			}
		}
	}
	for _, d := range []dialect{dialectPostgres, dialectMySQL, dialectSQLite} {
		if count[d] < 10 {
			t.Errorf("%s has %d refusal cases; want at least 10", d, count[d])
		}
	}
}

// TestQueryAccepted: reads pass the check, with the text sent as written
// (placeholders numbered for PostgreSQL).
func TestQueryAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d            dialect
		query        string
		want         string // text sent; "" means the query unchanged
		placeholders int
		literal      bool
	}{
		{dialectPostgres, "SELECT 1", "", 0, false},
		{dialectPostgres, "select * from t where a = ? and b = ?", "select * from t where a = $1 and b = $2", 2, false},
		{dialectPostgres, `SELECT ?, '?', "?", ?`, `SELECT $1, '?', "?", $2`, 2, true},
		{dialectPostgres, "WITH x AS (SELECT 1) SELECT * FROM x", "", 0, false},
		{dialectPostgres, "VALUES (1), (2)", "", 0, false},
		{dialectPostgres, "TABLE t", "", 0, false},
		{dialectPostgres, "SHOW search_path", "", 0, false},
		{dialectPostgres, "EXPLAIN (FORMAT JSON) SELECT 1", "", 0, false},
		{dialectPostgres, "(SELECT 1) UNION (SELECT 2);", "", 0, false},
		{dialectPostgres, `SELECT "update", "into" FROM "delete"`, "", 0, false},
		{dialectPostgres, "SELECT a::text, 5 # 3, a$b FROM t", "", 0, false},
		{dialectPostgres, "SELECT E'abc', U&'d', X'1F'", "", 0, true},
		{dialectPostgres, "SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY", "", 0, false},
		{dialectMySQL, "SELECT 1 - -1", "", 0, false},
		{dialectMySQL, "SHOW TABLES", "", 0, false},
		{dialectMySQL, "DESCRIBE t", "", 0, false},
		{dialectMySQL, "SELECT `from`, REPLACE(a, ?, ?) FROM t", "", 2, false},
		{dialectMySQL, "SELECT CONVERT(a USING utf8mb4) FROM t WHERE b > ?", "", 1, false},
		{dialectSQLite, "SELECT * FROM pragma_table_info(?)", "", 1, false},
		{dialectSQLite, "EXPLAIN QUERY PLAN SELECT 1", "", 0, false},
		{dialectSQLite, "SELECT [order], `group` FROM t", "", 0, false},
	}
	for _, tt := range tests {
		st, err := checkSQL(tt.query, tt.d, "query")
		if err != nil {
			t.Errorf("checkSQL(%q, %s) error: %v", tt.query, tt.d, err)
			continue
		}
		want := tt.want
		if want == "" {
			want = tt.query
		}
		if st.text != want || st.placeholders != tt.placeholders || st.literal != tt.literal {
			t.Errorf("checkSQL(%q, %s) = %q, %d placeholders, literal %v; want %q, %d, %v",
				tt.query, tt.d, st.text, st.placeholders, st.literal, want, tt.placeholders, tt.literal)
		}
	}
}

func TestExecuteChecks(t *testing.T) {
	t.Parallel()
	refused := []refusal{
		{dialectPostgres, "INSERT INTO t VALUES (1); DROP TABLE t", nil, CodeMultipleStatements},
		{dialectMySQL, "INSERT INTO t VALUES (1); DROP TABLE t", nil, CodeMultipleStatements},
		{dialectSQLite, "INSERT INTO t VALUES (1); DROP TABLE t", nil, CodeMultipleStatements},
		{dialectSQLite, "CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u; END; DROP TABLE t", nil, CodeMultipleStatements},
		{dialectMySQL, "/*! DROP TABLE t */ SELECT 1", nil, CodeStatementNotAllowed},
		{dialectSQLite, "ATTACH ? AS x", nil, CodeStatementNotAllowed},
		{dialectSQLite, "attach database ? as x", nil, CodeStatementNotAllowed},
		{dialectSQLite, "DETACH x", nil, CodeStatementNotAllowed},
		{dialectSQLite, "VACUUM INTO ?", nil, CodeStatementNotAllowed},
		{dialectSQLite, "vacuum main into ?", nil, CodeStatementNotAllowed},
		{dialectSQLite, "SELECT :x", nil, CodeInvalidQuery},
	}
	for _, tt := range refused {
		_, err := checkSQL(tt.query, tt.d, "execute")
		wantCode(t, tt.d.String()+" execute "+tt.query, err, tt.code, "query")
	}
	accepted := []struct {
		d     dialect
		query string
	}{
		{dialectSQLite, "VACUUM"},
		{dialectSQLite, "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u VALUES (new.a); UPDATE u SET b = 1; END;"},
		{dialectMySQL, "CREATE PROCEDURE p() BEGIN DECLARE x INT; IF x THEN SELECT 1; END IF; BEGIN SELECT 2; END; END"},
		{dialectPostgres, "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END"},
		{dialectPostgres, "INSERT INTO t VALUES (?) RETURNING id"},
		{dialectMySQL, "UPDATE t SET a = a - -1 WHERE id = ?"},
	}
	for _, tt := range accepted {
		if _, err := checkSQL(tt.query, tt.d, "execute"); err != nil {
			t.Errorf("checkSQL(%q, %s, execute) error: %v", tt.query, tt.d, err)
		}
	}
}

func TestLexer(t *testing.T) {
	t.Parallel()
	kinds := func(d dialect, src string) string {
		toks, err := lexSQL(src, d)
		if err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		names := map[tokenKind]string{tokWord: "w", tokQuotedIdent: "q", tokString: "s", tokDollarString: "$s",
			tokNumber: "n", tokPlaceholder: "?", tokOtherParam: "p", tokSemicolon: ";", tokComment: "c", tokPunct: "."}
		for _, tk := range toks {
			b.WriteString(names[tk.kind] + " ")
		}
		return strings.TrimSpace(b.String())
	}
	tests := []struct {
		d         dialect
		src, want string
	}{
		{dialectPostgres, `SELECT E'a\'b', 'c\'`, `w w s . s`},        // E-strings escape; standard ones do not
		{dialectPostgres, `SELECT 'it''s' ;`, `w s ;`},                // doubled quote
		{dialectPostgres, `SELECT $a$ x ' ; $a$, $$y$$`, `w $s . $s`}, // dollar quotes hide quotes and semicolons
		{dialectPostgres, `SELECT a$b, $1`, `w w . p`},
		{dialectPostgres, `/* a /* b */ c */ SELECT`, `c w`}, // nested
		{dialectPostgres, `SELECT "a""b" -- x`, `w q c`},
		{dialectMySQL, `SELECT 'a\'b' # c`, `w s c`}, // MySQL escapes with a backslash
		{dialectMySQL, `SELECT "x", 1--2, 3-- c`, `w s . n . n . n c`},
		{dialectMySQL, "SELECT `a``b`", `w q`},
		{dialectSQLite, `SELECT [a;b], ?3, :x, 'a\'`, `w q . p . p . s`},
		{dialectSQLite, `SELECT "a"`, `w q`},
		{dialectPostgres, `SELECT 'open`, `error: unterminated string literal at character 8`},
	}
	for _, tt := range tests {
		if got := kinds(tt.d, tt.src); got != tt.want {
			t.Errorf("lexSQL(%q, %s) = %s; want %s", tt.src, tt.d, got, tt.want)
		}
	}
}

// FuzzCheckSQL: the checks never panic, and a query they accept lexes to
// one statement with no comment, dollar quote or backslash in quotes.
func FuzzCheckSQL(f *testing.F) {
	for _, r := range queryRefusals {
		f.Add(r.query, int(r.d))
	}
	f.Add("SELECT a FROM t WHERE b = ?", 0)
	f.Fuzz(func(t *testing.T, src string, di int) {
		d := dialect(((di % 3) + 3) % 3)
		st, err := checkSQL(src, d, "query")
		if _, eerr := checkSQL(src, d, "execute"); eerr != nil && err == nil {
			// A read can still be refused as an execute only for an
			// embedded ATTACH-like word, which the query check refuses too.
			t.Fatalf("checkSQL(%q, %s): query accepted, execute refused: %v", src, d, eerr)
		}
		if err != nil {
			return
		}
		toks, lerr := lexSQL(src, d)
		if lerr != nil {
			t.Fatalf("checkSQL(%q) accepted a query the lexer refuses: %v", src, lerr)
		}
		for _, tk := range toks {
			if tk.kind == tokComment || tk.kind == tokDollarString || tk.backslash {
				t.Fatalf("checkSQL(%q) accepted token %q", src, tk.text)
			}
		}
		if st.firstWord == "" && !strings.HasPrefix(strings.TrimSpace(src), "(") {
			t.Fatalf("checkSQL(%q) accepted a query with no first keyword", src)
		}
	})
}
