// Package database holds the Database node: one SQL statement on an
// embedded SQLite file, PostgreSQL or MySQL/MariaDB, or one key-value
// operation on Redis. It is a dangerous node, off unless the server runs
// with --allow-database.
//
// Each run opens its own connection and closes it before returning; nothing
// is pooled between runs. The query operation is held read-only twice: a
// lexer refuses any statement that is not provably a read (sqlcheck.go),
// and the database itself runs it in a read-only transaction (PostgreSQL,
// MySQL) or on a read-only, query-only connection with an authorizer
// (SQLite). With allow_local off, every host the drivers would dial is
// checked before connecting and again, on the connected address, at dial
// time (addr.go).
package database

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(Spec()) }

// Error codes of the Database node (DB_ERROR and INVALID_CONFIG are shared).
const (
	// CodeInvalidParams: params is not a JSON array, or holds a different
	// number of values than the query has ? placeholders.
	CodeInvalidParams = "INVALID_PARAMS"
	// CodeInvalidQuery: the query cannot be lexed (an unterminated quote or
	// comment), holds a NUL, holds no statement, or uses a placeholder
	// other than ?.
	CodeInvalidQuery = "INVALID_QUERY"
	// CodeNotReadOnly: a query operation that is not provably read-only,
	// refused before connecting, or stopped by the database's own
	// read-only mode.
	CodeNotReadOnly = "QUERY_NOT_READ_ONLY"
	// CodeRawSQLNotAllowed: a string literal in the query without
	// allow_raw_sql, or allow_raw_sql on a run no admin started.
	CodeRawSQLNotAllowed = "RAW_SQL_NOT_ALLOWED"
	// CodeStatementNotAllowed: a statement refused in every mode: ATTACH,
	// DETACH and VACUUM INTO on the embedded database, MySQL executable
	// comments.
	CodeStatementNotAllowed = "STATEMENT_NOT_ALLOWED"
	// CodeMultipleStatements: an execute operation with more than one
	// statement.
	CodeMultipleStatements = "MULTIPLE_STATEMENTS"
	// CodeAddressNotAllowed: the host to dial is local or private and
	// allow_local is off.
	CodeAddressNotAllowed = "ADDRESS_NOT_ALLOWED"
	// CodeConnectionFailed: no connection could be made within 10 seconds;
	// nothing was sent, so it is retryable.
	CodeConnectionFailed = "CONNECTION_FAILED"
	// CodeConnectionLost: the connection broke during the operation;
	// retryable only where repeating changes nothing.
	CodeConnectionLost = "CONNECTION_LOST"
	// CodeRowLimitExceeded: a query result over 100,000 rows or 32 MiB.
	CodeRowLimitExceeded = "ROW_LIMIT_EXCEEDED"
	// CodeValueTooLarge: a key-value get or hget over 32 MiB.
	CodeValueTooLarge = "VALUE_TOO_LARGE"
	// CodeInvalidKey, CodeInvalidValue and CodeInvalidField: a key-value
	// operand that is missing or not a string, number or boolean.
	CodeInvalidKey   = "INVALID_KEY"
	CodeInvalidValue = "INVALID_VALUE"
	CodeInvalidField = "INVALID_FIELD"
)

// Codes written to the run log (the node does not fail).
const (
	LogResultTruncated = "RESULT_TRUNCATED"
	LogDuplicateColumn = "DUPLICATE_COLUMN"
	LogPrecision       = "PRECISION"
)

// Database types.
const (
	TypeEmbedded = "sql_embedded"
	TypePostgres = "sql_pg"
	TypeMySQL    = "sql_my"
	TypeKV       = "kv"
)

// Default limits (spec/nodes.md: 100,000 rows or 32 MiB).
const (
	DefaultMaxRows       = 100_000
	DefaultMaxBytes      = 32 << 20
	DefaultMaxValueBytes = 32 << 20
)

var (
	sqlOps = []string{"query", "execute"}
	kvOps  = []string{"get", "set", "del", "lpush", "rpush", "lpop", "rpop", "hget", "hset"}
)

// Spec is the Database node.
func Spec() *node.Spec {
	return &node.Spec{
		TypeID:      "database",
		DisplayName: "Database",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Runs one SQL statement on SQLite, PostgreSQL or MySQL, or one operation on a Redis key-value store.",
		Fields: []node.Field{
			{Name: "db_type", Kind: node.KindEnum, Enum: []string{TypeEmbedded, TypePostgres, TypeMySQL, TypeKV}, FoldCase: true, Default: TypeEmbedded,
				Description: "sql_embedded (a SQLite file), sql_pg (PostgreSQL), sql_my (MySQL or MariaDB) or kv (Redis)"},
			{Name: "db_path", Kind: node.KindText, Description: "sql_embedded: absolute path of the file, ending .db, .sqlite or .sqlite3"},
			{Name: "connection_url", Kind: node.KindText,
				Description: "postgres://, mysql:// (or a MySQL DSN), redis://, rediss:// or unix:// URL"},
			{Name: "password", Kind: node.KindText, Credential: true, Description: "replaces any password in connection_url"},
			{Name: "query", Kind: node.KindText, NoExpressions: true,
				Description: "one SQL statement with ? placeholders; {{ }} expressions are refused (pass values in params)"},
			{Name: "params", Kind: node.KindArray, Code: CodeInvalidParams, Description: "JSON array of values for the ? placeholders"},
			{Name: "operation", Kind: node.KindEnum, Enum: append(append([]string{}, sqlOps...), kvOps...), FoldCase: true,
				Description: "SQL: query (read-only, default) or execute; kv: get (default), set, del, lpush, rpush, lpop, rpop, hget, hset"},
			{Name: "key", Kind: node.KindText, Code: CodeInvalidKey, Description: "kv: the key"},
			{Name: "value", Kind: node.KindAny, Code: CodeInvalidValue, Description: "kv set, lpush, rpush, hset: text, number or boolean"},
			{Name: "field", Kind: node.KindText, Code: CodeInvalidField, Description: "kv hget, hset: the hash field"},
			{Name: "expire", Kind: node.KindInteger, Min: node.Bound(0), Default: 0,
				Description: "kv set: time to live in seconds; 0 keeps the key until deleted"},
			{Name: "allow_raw_sql", Kind: node.KindBoolean, Default: false,
				Description: "allow string literals in the query; only a run started by an admin on a server may turn it on"},
			{Name: "allow_local", Kind: node.KindBoolean, Default: false,
				Description: "allow localhost, private and link-local addresses and Unix sockets"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort, node.ErrorPort},
		Output: node.Object(map[string]any{
			"rows":           map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "SQL: one object per row, keyed by column name"},
			"columns":        map[string]any{"type": "array", "items": node.T("string"), "description": "SQL: column names in order"},
			"rows_affected":  node.T("integer", "SQL execute: rows changed; 0 for a query"),
			"last_insert_id": node.T("integer", "SQL execute: id of the last inserted row (always 0 on sql_pg: use RETURNING)"),
			"truncated":      node.T("boolean", "SQL execute: rows beyond the limits were dropped"),
			"value":          node.T("", "kv: the value read, popped or written; null when absent"),
			"ok":             node.T("boolean", "kv: the key (or field, or element) was there, or the write succeeded"),
			"deleted":        node.T("integer", "kv del: keys removed"),
			"list_length":    node.T("integer", "kv lpush, rpush: length of the list after the push"),
		}),
		Enabled:    false,
		EnableFlag: "--allow-database",
		New: func(c node.Config) (node.Runner, error) {
			return New(Options{
				DBType:        c.String("db_type"),
				DBPath:        strings.TrimSpace(c.String("db_path")),
				ConnectionURL: strings.TrimSpace(c.String("connection_url")),
				Password:      c.String("password"),
				Query:         c.String("query"),
				Params:        c.Array("params"),
				Operation:     c.String("operation"),
				Key:           c.Value("key"),
				Value:         c.Value("value"),
				Field:         c.Value("field"),
				Expire:        c.Int("expire"),
				AllowRawSQL:   c.Bool("allow_raw_sql"),
				AllowLocal:    c.Bool("allow_local"),
			})
		},
	}
}

// Options is a Database node's configuration.
type Options struct {
	DBType        string // TypeEmbedded (the zero value), TypePostgres, TypeMySQL or TypeKV
	DBPath        string
	ConnectionURL string
	Password      string // replaces the URL's password when not empty
	Query         string
	Params        []any
	Operation     string // blank is query for SQL, get for kv
	Key           any
	Value         any
	Field         any
	Expire        int // seconds; 0 is no expiry
	AllowRawSQL   bool
	AllowLocal    bool
	// Limits left zero take the defaults.
	Limits Limits
}

// Limits bound what a run reads.
type Limits struct {
	MaxRows       int   // rows in a SQL result
	MaxBytes      int64 // bytes of a SQL result: column names plus values as the server sent them
	MaxValueBytes int64 // bytes of a kv get or hget value
}

// Database is a configured Database node. Everything in it is read-only
// after New, so one value may run many times at once.
type Database struct {
	opts    Options
	op      string
	dialect dialect
	stmt    statement
	args    []any

	pg *pgconn.Config
	my *mysql.Config
	kv *redis.Options
	kd kvData
}

// New checks a configuration and returns the node. Every refusal of the
// configuration happens here, before any connection.
func New(o Options) (*Database, error) {
	if o.DBType == "" {
		o.DBType = TypeEmbedded
	}
	if o.Limits.MaxRows <= 0 {
		o.Limits.MaxRows = DefaultMaxRows
	}
	if o.Limits.MaxBytes <= 0 {
		o.Limits.MaxBytes = DefaultMaxBytes
	}
	if o.Limits.MaxValueBytes <= 0 {
		o.Limits.MaxValueBytes = DefaultMaxValueBytes
	}
	d := &Database{opts: o, op: o.Operation}
	switch o.DBType {
	case TypeKV:
		if d.op == "" {
			d.op = "get"
		}
		if !contains(kvOps, d.op) {
			return nil, node.ConfigError("operation", "%s is not a key-value operation; use one of %s", d.op, strings.Join(kvOps, ", "))
		}
		if err := d.newKV(); err != nil {
			return nil, err
		}
		return d, nil
	case TypeEmbedded, TypePostgres, TypeMySQL:
		if d.op == "" {
			d.op = "query"
		}
		if !contains(sqlOps, d.op) {
			return nil, node.ConfigError("operation", "%s is not a SQL operation; use query or execute", d.op)
		}
		if err := d.newSQL(); err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, node.ConfigError("db_type", "must be one of sql_embedded, sql_pg, sql_my, kv")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func (d *Database) newSQL() error {
	o := d.opts
	var err error
	switch o.DBType {
	case TypeEmbedded:
		d.dialect = dialectSQLite
		if err := checkDBPath(o.DBPath); err != nil {
			return err
		}
	case TypePostgres:
		d.dialect = dialectPostgres
		if o.ConnectionURL == "" {
			return node.ConfigError("connection_url", "is required for sql_pg")
		}
		if d.pg, err = parsePostgresURL(o.ConnectionURL, o.Password); err != nil {
			return err
		}
	case TypeMySQL:
		d.dialect = dialectMySQL
		if o.ConnectionURL == "" {
			return node.ConfigError("connection_url", "is required for sql_my")
		}
		if d.my, err = parseMySQLURL(o.ConnectionURL, o.Password); err != nil {
			return err
		}
	}
	if strings.TrimSpace(o.Query) == "" {
		return node.ConfigError("query", "is required for SQL")
	}
	if d.stmt, err = checkSQL(o.Query, d.dialect, d.op); err != nil {
		return err
	}
	if d.stmt.literal && !o.AllowRawSQL {
		return node.FieldError(CodeRawSQLNotAllowed, "query",
			"holds a string literal; pass values in params with ? placeholders (allow_raw_sql permits literals, for admin runs only)")
	}
	if len(o.Params) != d.stmt.placeholders {
		return node.FieldError(CodeInvalidParams, "params", "holds %d value(s) but the query has %d ? placeholder(s)", len(o.Params), d.stmt.placeholders)
	}
	d.args = o.Params
	return nil
}

// checkDBPath holds the embedded database to an absolute path with a
// database extension.
func checkDBPath(p string) error {
	if p == "" {
		return node.ConfigError("db_path", "is required for sql_embedded")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return node.ConfigError("db_path", "holds a NUL character")
	}
	if !filepath.IsAbs(p) {
		return node.ConfigError("db_path", "must be an absolute path (got %q)", p)
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".db", ".sqlite", ".sqlite3":
	default:
		return node.ConfigError("db_path", "must end in .db, .sqlite or .sqlite3 (got %q)", filepath.Base(p))
	}
	return nil
}

// Run checks the caller and the destination, connects, and runs the
// operation.
func (d *Database) Run(ctx context.Context, env node.Env) (node.Result, error) {
	if d.opts.DBType != TypeKV && d.opts.AllowRawSQL && !env.Admin() {
		return node.Result{}, node.FieldError(CodeRawSQLNotAllowed, "allow_raw_sql",
			"can be turned on only in a run started by an admin caller on a server")
	}
	g := guard{allowLocal: d.opts.AllowLocal}
	if err := d.checkTargets(ctx, g); err != nil {
		return node.Result{}, err
	}
	var (
		out map[string]any
		err error
	)
	switch d.opts.DBType {
	case TypeEmbedded:
		out, err = d.runSQLite(ctx, env)
	case TypePostgres:
		out, err = d.runPostgres(ctx, env, g)
	case TypeMySQL:
		out, err = d.runMySQL(ctx, env, g)
	case TypeKV:
		out, err = d.runKV(ctx, g)
	}
	if err != nil {
		if ctx.Err() != nil {
			return node.Result{}, ctx.Err()
		}
		return node.Result{}, err
	}
	return node.Result{Output: out}, nil
}

// target is one place a driver will connect to: a host name or address,
// or a Unix socket path.
type target struct {
	unix bool
	host string
}

// targets lists every place the configured driver may dial.
func (d *Database) targets() []target {
	switch d.opts.DBType {
	case TypePostgres:
		var out []target
		for _, h := range pgHosts(d.pg) {
			out = append(out, target{unix: strings.HasPrefix(h, "/"), host: h})
		}
		return out
	case TypeMySQL:
		return []target{addrTarget(d.my.Net, d.my.Addr)}
	case TypeKV:
		return []target{addrTarget(d.kv.Network, d.kv.Addr)}
	}
	return nil
}

// addrTarget reads a network and address as drivers give them.
func addrTarget(network, addr string) target {
	if network == "unix" {
		return target{unix: true, host: addr}
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return target{host: host}
	}
	return target{host: addr}
}

// checkTargets refuses, before connecting, a destination that allow_local
// does not permit. The dialer checks again on the address it connects to.
func (d *Database) checkTargets(ctx context.Context, g guard) error {
	for _, t := range d.targets() {
		var err error
		if t.unix {
			err = g.checkUnix(t.host)
		} else {
			err = g.checkHost(ctx, t.host)
		}
		if ae, ok := asAddrError(err); ok {
			return addrFailure(ae)
		}
	}
	return nil
}

// addrFailure maps a refused destination.
func addrFailure(ae *addrError) error {
	return &node.Error{Code: CodeAddressNotAllowed, Field: "connection_url", Message: "connection_url: " + ae.Error(), Err: ae}
}

// connectFailure is a connection that could not be made: retryable,
// nothing was sent.
func connectFailure(what string, err error) error {
	if ae, ok := asAddrError(err); ok {
		return addrFailure(ae)
	}
	return &node.Error{Code: CodeConnectionFailed, Field: "connection_url", Retry: node.Retryable, Err: err,
		Message: fmt.Sprintf("connection_url: cannot connect to %s: %v", what, err)}
}

// lostFailure is a connection that broke during the operation; retry says
// whether repeating the operation is safe.
func lostFailure(what string, err error, retry bool) error {
	e := &node.Error{Code: CodeConnectionLost, Message: fmt.Sprintf("lost the connection to %s: %v", what, err), Err: err}
	if retry {
		e.Retry = node.Retryable
	}
	return e
}

// serverFailure is an error the database reported.
func serverFailure(err error) error {
	return &node.Error{Code: node.CodeDBError, Message: "database error: " + err.Error(), Err: err}
}

// textArg renders a parameter for drivers that take text: objects and
// arrays as JSON.
func textArg(v any) any {
	switch t := v.(type) {
	case nil, string, bool, int, int64, float64:
		return t
	case map[string]any, []any:
		return string(value.Encode(t))
	}
	return value.Text(v)
}

var _ node.Runner = (*Database)(nil)
