package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// readPragmas are the pragmas a query may read through their table-valued
// functions (pragma_table_info('t') and the like).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "database_list": true, "collation_list": true,
	"function_list": true, "module_list": true, "pragma_list": true, "compile_options": true,
}

// sqliteDSN is the driver's name for a database file: a file: URI (so
// SQLite reads mode=ro) with the path percent-encoded.
func sqliteDSN(path string, readOnly bool) string {
	var b strings.Builder
	b.WriteString("file:")
	const unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/"
	for i := 0; i < len(path); i++ {
		c := path[i]
		if strings.IndexByte(unreserved, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if readOnly {
		b.WriteString("?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	} else {
		b.WriteString("?_pragma=busy_timeout(5000)&_defensive=1")
	}
	return b.String()
}

// queryAuthorizer lets a query read and call functions, nothing else: the
// database's own enforcement of the query operation, behind mode=ro and
// query_only.
func queryAuthorizer(action sqlite.AuthorizerActionCode, arg1, _, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthFunction, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		if readPragmas[strings.ToLower(arg1)] {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// executeAuthorizer refuses opening another file: ATTACH, and VACUUM INTO
// (which SQLite presents as an attach of the target file). A plain VACUUM
// attaches a nameless temporary database, which is allowed.
func executeAuthorizer(action sqlite.AuthorizerActionCode, arg1, _, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthAttach:
		if arg1 != "" {
			return sqlite.AuthorizerDeny
		}
	case sqlite.AuthDetach:
		if arg1 != "vacuum_db" {
			return sqlite.AuthorizerDeny
		}
	}
	return sqlite.AuthorizerOK
}

func (d *Database) runSQLite(ctx context.Context, env node.Env) (map[string]any, error) {
	query := d.op == "query"
	path := d.opts.DBPath
	if query {
		if _, err := os.Stat(path); err != nil {
			return nil, &node.Error{Code: node.CodeDBError, Field: "db_path", Message: "db_path: cannot open the database: " + err.Error(), Err: err}
		}
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, query))
	if err != nil {
		return nil, serverFailure(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, &node.Error{Code: node.CodeDBError, Field: "db_path", Message: "db_path: cannot open the database: " + err.Error(), Err: err}
	}
	defer conn.Close()
	auth := executeAuthorizer
	if query {
		auth = queryAuthorizer
	}
	err = conn.Raw(func(dc any) error {
		ar, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer")
		}
		return ar.RegisterAuthorizer(auth)
	})
	if err != nil {
		return nil, node.Errorf(node.CodeInternal, "embedded database: %v", err)
	}
	args := make([]any, len(d.args))
	for i, a := range d.args {
		args[i] = textArg(a)
	}
	rows, err := conn.QueryContext(ctx, d.stmt.text, args...)
	if err != nil {
		return nil, d.sqliteFailure(err)
	}
	rs, err := collectSQLRows(rows, d.opts.Limits, !query, env, decodeSQLite)
	if err != nil {
		_ = rows.Close()
		return nil, d.sqliteFailure(err)
	}
	if query {
		return rs.finish(0, 0), nil
	}
	var affected, lastID int64
	if err := conn.QueryRowContext(ctx, "SELECT changes(), last_insert_rowid()").Scan(&affected, &lastID); err != nil {
		return nil, d.sqliteFailure(err)
	}
	if rs.seen > 0 && !d.stmt.returning {
		affected = 0 // a read through execute: changes() is stale
	}
	return rs.finish(affected, lastID), nil
}

// sqliteFailure maps an error of the embedded database.
func (d *Database) sqliteFailure(err error) error {
	var ne *node.Error
	if errors.As(err, &ne) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH:
			if d.op == "query" {
				return &node.Error{Code: CodeNotReadOnly, Field: "query", Message: "query: the database refused it as not read-only: " + err.Error(), Err: err}
			}
			if se.Code()&0xff == sqlite3.SQLITE_AUTH {
				return &node.Error{Code: CodeStatementNotAllowed, Field: "query", Message: "query: refused on the embedded database: " + err.Error(), Err: err}
			}
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			e := serverFailure(err).(*node.Error)
			if d.op == "query" {
				e.Retry = node.Retryable
			}
			return e
		}
	}
	return serverFailure(err)
}

// decodeSQLite turns a driver value into a run value.
func decodeSQLite(rs *resultSet, col int, typeName string, v any) any {
	switch t := v.(type) {
	case int64:
		return rs.integer(col, t)
	case float64:
		return floatValue(t)
	case []byte:
		return binaryValue(t)
	case time.Time:
		return isoTime(t, typeName == "DATE")
	case string:
		if typeName == "JSON" {
			if j, err := value.DecodeString(t); err == nil {
				return j
			}
		}
		return t
	case bool:
		return t
	}
	return unsupported(typeName)
}
