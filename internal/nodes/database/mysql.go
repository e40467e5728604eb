package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// mysqlAllowedVars are the session variables a MySQL URL may set (the
// driver sends other unknown parameters as SET statements; autocommit=0
// would make every execute silently roll back).
var mysqlAllowedVars = map[string]bool{
	"time_zone": true, "sql_mode": true, "wait_timeout": true, "net_read_timeout": true, "net_write_timeout": true,
	"max_execution_time": true, "max_statement_time": true, "lock_wait_timeout": true, "innodb_lock_wait_timeout": true,
}

// parseMySQLURL reads a mysql:// (or mariadb://) URL, or a driver DSN
// (user:pass@tcp(host:3306)/db), and pins the options that matter for
// safety: no LOCAL INFILE from any file, one statement per call, values
// sent apart from the statement, and dates as text.
func parseMySQLURL(raw, password string) (*mysql.Config, error) {
	var cfg *mysql.Config
	var err error
	if scheme, _, ok := strings.Cut(raw, "://"); ok {
		if scheme != "mysql" && scheme != "mariadb" {
			return nil, node.ConfigError("connection_url", "must be a mysql:// URL or a MySQL DSN for sql_my")
		}
		cfg, err = mysqlFromURL(raw)
	} else {
		cfg, err = mysql.ParseDSN(raw)
		if err != nil {
			err = node.ConfigError("connection_url", "is not a usable MySQL DSN: %v", err)
		}
	}
	if err != nil {
		return nil, err
	}
	switch cfg.Net {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		return nil, node.ConfigError("connection_url", "network %q is not supported; use tcp or unix", cfg.Net)
	}
	for k := range cfg.Params {
		if !mysqlAllowedVars[strings.ToLower(k)] {
			return nil, node.ConfigError("connection_url", "parameter %q is not allowed", k)
		}
	}
	if password != "" {
		cfg.Passwd = password
	}
	cfg.AllowAllFiles = false
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.ParseTime = false
	cfg.ColumnsWithAlias = false
	if cfg.Timeout <= 0 || cfg.Timeout > connectTimeout {
		cfg.Timeout = connectTimeout
	}
	cfg.Logger = &mysql.NopLogger{}
	return cfg, nil
}

func mysqlFromURL(raw string) (*mysql.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the URL, password included
		}
		return nil, node.ConfigError("connection_url", "is not a usable MySQL URL: %v", err)
	}
	if u.Hostname() == "" {
		return nil, node.ConfigError("connection_url", "names no host")
	}
	// The parameters go through the driver's own parser, then the whole
	// configuration once more so that it derives what depends on the host
	// (the TLS server name).
	cfg, err := mysql.ParseDSN("/?" + u.RawQuery)
	if err != nil {
		return nil, node.ConfigError("connection_url", "has unusable parameters: %v", err)
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.TLS = nil
	cfg, err = mysql.ParseDSN(cfg.FormatDSN())
	if err != nil {
		return nil, node.ConfigError("connection_url", "is not a usable MySQL URL: %v", err)
	}
	return cfg, nil
}

func (d *Database) runMySQL(ctx context.Context, env node.Env, g guard) (map[string]any, error) {
	cfg := d.my.Clone()
	cfg.DialFunc = g.dial
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, node.ConfigError("connection_url", "%v", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1)
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, err := db.Conn(cctx)
	cancel()
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return nil, serverFailure(err)
		}
		return nil, connectFailure("MySQL", err)
	}
	defer conn.Close()

	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return nil, d.mysqlFailure(err)
	}
	// A cancelled run makes the driver drop the connection, which does not
	// stop a statement already running on the server; a second connection
	// asks the server to stop it (best effort, within 5 seconds).
	stop := context.AfterFunc(ctx, func() { killMySQLQuery(connector, id) })
	defer stop()

	query := d.op == "query"
	if query {
		if _, err := conn.ExecContext(ctx, "START TRANSACTION READ ONLY"); err != nil {
			return nil, d.mysqlFailure(err)
		}
	}
	args := make([]any, len(d.args))
	for i, a := range d.args {
		args[i] = textArg(a)
	}
	// The rows are read under their own context: leaving a query over its
	// limits cancels it, which drops the connection instead of reading the
	// rest of the rows.
	qctx, qcancel := context.WithCancel(ctx)
	defer qcancel()
	rows, err := conn.QueryContext(qctx, d.stmt.text, args...)
	if err != nil {
		return nil, d.mysqlFailure(err)
	}
	rs, err := collectSQLRows(rows, d.opts.Limits, !query, env, decodeMySQL)
	if err != nil {
		qcancel()
		_ = rows.Close()
		return nil, d.mysqlFailure(err)
	}
	if query {
		_, _ = conn.ExecContext(ctx, "ROLLBACK")
		return rs.finish(0, 0), nil
	}
	var affected, lastID int64
	if err := conn.QueryRowContext(ctx, "SELECT ROW_COUNT(), LAST_INSERT_ID()").Scan(&affected, &lastID); err != nil {
		return nil, d.mysqlFailure(err)
	}
	if affected < 0 { // a statement that returned rows
		affected = 0
		if d.stmt.returning {
			affected = int64(rs.seen)
		}
	}
	return rs.finish(affected, lastID), nil
}

// killMySQLQuery stops the statement running on connection id.
func killMySQLQuery(connector driver.Connector, id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db := sql.OpenDB(connector)
	defer db.Close()
	_, _ = db.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10))
}

// mysqlFailure maps an error after connecting.
func (d *Database) mysqlFailure(err error) error {
	var ne *node.Error
	if errors.As(err, &ne) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if me.Number == 1792 && d.op == "query" { // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
			return &node.Error{Code: CodeNotReadOnly, Field: "query", Message: "query: the database refused a write in the read-only transaction: " + me.Message, Err: err}
		}
		return serverFailure(err)
	}
	return lostFailure("MySQL", err, d.op == "query")
}

// collectSQLRows reads a database/sql result under the limits, decoding
// each value with decode (given the column's database type name).
func collectSQLRows(rows *sql.Rows, limits Limits, execute bool, env node.Env,
	decode func(rs *resultSet, col int, typeName string, v any) any) (*resultSet, error) {
	rs := newResultSet(limits, execute, env.Logger())
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	rs.setColumns(cols)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var size int64
		for i, v := range vals {
			size += int64(len(cols[i])) + cellSize(v)
		}
		keep, err := rs.admit(size)
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = decode(rs, i, cts[i].DatabaseTypeName(), v)
			}
		}
		rs.add(row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return rs, nil
}

// decodeMySQL turns a driver value into a run value by the column's type.
// Values come as []byte from the text protocol and as Go numbers from
// the binary one (a statement with parameters).
func decodeMySQL(rs *resultSet, col int, typeName string, v any) any {
	switch t := v.(type) {
	case int64:
		return rs.integer(col, t)
	case uint64:
		return rs.unsigned(col, t)
	case float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(t), 'g', -1, 32), 64)
		return floatValue(f)
	case float64:
		return floatValue(t)
	case time.Time:
		return isoTime(t, typeName == "DATE")
	case string:
		v = []byte(t)
	}
	b, ok := v.([]byte)
	if !ok {
		return fmt.Sprint(v)
	}
	s := string(b)
	switch typeName {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return rs.integer(col, n)
		}
	case "UNSIGNED TINYINT", "UNSIGNED SMALLINT", "UNSIGNED MEDIUMINT", "UNSIGNED INT", "UNSIGNED BIGINT":
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return rs.unsigned(col, n)
		}
	case "FLOAT", "DOUBLE":
		return parseFloatText(s)
	case "DECIMAL":
		return s
	case "DATETIME", "TIMESTAMP":
		return isoDateTime(s)
	case "DATE", "TIME":
		return s
	case "JSON":
		if j, err := value.DecodeString(s); err == nil {
			return j
		}
		return s
	case "BIT":
		var n uint64
		for _, c := range b {
			n = n<<8 | uint64(c)
		}
		return rs.unsigned(col, n)
	case "BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB":
		return binaryValue(b)
	case "GEOMETRY", "VECTOR", "":
		name := strings.ToLower(typeName)
		if name == "" {
			name = "unknown"
		}
		return unsupported(name)
	}
	return s
}
