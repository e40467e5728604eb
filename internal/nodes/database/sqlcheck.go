package database

import (
	"strconv"
	"strings"

	"github.com/svcrun/svc/internal/node"
)

// readOnlyStarts are the first keywords a query operation may start with,
// per dialect. A leading "(" is allowed before SELECT, WITH, VALUES and TABLE.
var readOnlyStarts = map[dialect]map[string]bool{
	dialectSQLite:   {"SELECT": true, "WITH": true, "VALUES": true, "EXPLAIN": true},
	dialectPostgres: {"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true, "SHOW": true, "EXPLAIN": true},
	dialectMySQL:    {"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true, "SHOW": true, "EXPLAIN": true, "DESCRIBE": true, "DESC": true},
}

// writeWords are keywords refused anywhere in a query operation, each
// because a write or a lock can hide behind it inside a statement that
// starts like a read.
var writeWords = map[string]string{
	"INTO":      "SELECT ... INTO creates a table (PostgreSQL) or writes a file or variables (MySQL)",
	"INSERT":    "a data-modifying WITH, or EXPLAIN ANALYZE, runs it",
	"UPDATE":    "a data-modifying WITH runs it, and FOR UPDATE locks rows",
	"DELETE":    "a data-modifying WITH runs it",
	"MERGE":     "a data-modifying WITH runs it",
	"UPSERT":    "it writes",
	"RETURNING": "only data-modifying statements return rows this way",
	"CREATE":    "it changes the schema",
	"DROP":      "it changes the schema",
	"ALTER":     "it changes the schema",
	"TRUNCATE":  "it deletes rows",
	"GRANT":     "it changes permissions",
	"REVOKE":    "it changes permissions",
	"LOCK":      "LOCK IN SHARE MODE locks rows",
	"ANALYZE":   "EXPLAIN ANALYZE runs the statement it explains",
	"ANALYSE":   "EXPLAIN ANALYSE runs the statement it explains",
	"PROCEDURE": "SELECT ... PROCEDURE runs a procedure (MySQL)",
	"OUTFILE":   "it writes a file on the database server",
	"DUMPFILE":  "it writes a file on the database server",
	"ATTACH":    "it opens another database file",
	"DETACH":    "it changes the attached databases",
	"VACUUM":    "it rewrites the database",
	"PRAGMA":    "a pragma can change settings",
}

// sideEffectFuncs are functions with effects beyond reading that a read-only
// transaction does not stop (or stops only on some servers). The list is
// best effort: the database user's privileges are the real boundary.
var sideEffectFuncs = map[string]bool{
	"NEXTVAL": true, "SETVAL": true, "SET_CONFIG": true, "PG_NOTIFY": true,
	"PG_TERMINATE_BACKEND": true, "PG_CANCEL_BACKEND": true, "PG_RELOAD_CONF": true, "PG_ROTATE_LOGFILE": true,
	"PG_READ_FILE": true, "PG_READ_BINARY_FILE": true, "PG_LS_DIR": true, "PG_STAT_FILE": true,
	"PG_SWITCH_WAL": true, "PG_CREATE_RESTORE_POINT": true, "PG_PROMOTE": true, "PG_LOGICAL_EMIT_MESSAGE": true,
	"LOAD_FILE": true, "GET_LOCK": true, "RELEASE_LOCK": true, "RELEASE_ALL_LOCKS": true, "SYS_EXEC": true, "SYS_EVAL": true,
	"LOAD_EXTENSION": true, "READFILE": true, "WRITEFILE": true, "EDIT": true, "FTS3_TOKENIZER": true,
}

// sideEffectPrefixes are families of such functions.
var sideEffectPrefixes = []string{"PG_ADVISORY_", "PG_TRY_ADVISORY_", "LO_", "DBLINK", "PG_CREATE_", "PG_DROP_", "PG_REPLICATION_"}

// statement is a query after checking: the text to send and what it holds.
type statement struct {
	// text is the SQL to send: PostgreSQL's ? placeholders are rewritten
	// to $1, $2...
	text string
	// placeholders counts the ? placeholders.
	placeholders int
	// literal is set when the statement holds a string literal (quoted or
	// dollar-quoted).
	literal bool
	// firstWord is the statement's first keyword, upper case.
	firstWord string
	// returning is set when the statement has a RETURNING clause: a write
	// that returns rows.
	returning bool
}

// checkSQL lexes and checks a query for an operation ("query" or
// "execute"). Every refusal names the query field.
func checkSQL(src string, d dialect, op string) (statement, error) {
	if strings.IndexByte(src, 0) >= 0 {
		return statement{}, node.FieldError(CodeInvalidQuery, "query", "holds a NUL character")
	}
	toks, err := lexSQL(src, d)
	if err != nil {
		return statement{}, node.FieldError(CodeInvalidQuery, "query", "cannot be read as %s: %v", d, err)
	}
	st := statement{}
	var code []token // the tokens that are not comments
	for _, t := range toks {
		switch t.kind {
		case tokOtherParam:
			return statement{}, node.FieldError(CodeInvalidQuery, "query", "placeholder %s is not supported; write ? and pass the values in params", t.text)
		case tokPlaceholder:
			st.placeholders++
		case tokString, tokDollarString:
			st.literal = true
		case tokWord:
			st.returning = st.returning || t.upper() == "RETURNING"
		case tokComment:
			if t.executable && op != "query" {
				return statement{}, node.FieldError(CodeStatementNotAllowed, "query", "MySQL executable comments (/*! ... */) are not allowed")
			}
			continue
		}
		code = append(code, t)
	}
	if len(code) == 0 || (len(code) == 1 && code[0].kind == tokSemicolon) {
		return statement{}, node.FieldError(CodeInvalidQuery, "query", "holds no statement")
	}
	if n := statementCount(code, op == "execute"); n > 1 {
		if op == "query" {
			return statement{}, notReadOnly("it holds more than one statement")
		}
		return statement{}, node.FieldError(CodeMultipleStatements, "query", "holds more than one statement; run one statement per node")
	}
	st.firstWord = firstWord(code)

	if op == "query" {
		if err := checkReadOnly(toks, code, d); err != nil {
			return statement{}, err
		}
	} else if d == dialectSQLite {
		if err := checkEmbeddedExecute(code); err != nil {
			return statement{}, err
		}
	}
	st.text = src
	if d == dialectPostgres && st.placeholders > 0 {
		st.text = numberPlaceholders(src, toks)
	}
	return st, nil
}

// statementCount counts the statements in code: a semicolon ends one, and
// one trailing semicolon ends the last. With bodies, the semicolons inside
// the BEGIN ... END body of a CREATE statement (a trigger, a MySQL routine,
// a PostgreSQL BEGIN ATOMIC function) belong to it. An END directly
// followed by a semicolon (or the end) closes a BEGIN; a CASE ... END in
// that position closes it early, which can only make the count larger
// (a refusal), never hide a statement from the other checks, which read
// every token.
func statementCount(code []token, bodies bool) int {
	ends, depth := 0, 0
	start, create := true, false
	for i, t := range code {
		if t.kind == tokSemicolon {
			if depth == 0 {
				ends++
				start = true
			}
			continue
		}
		if start {
			create = bodies && t.kind == tokWord && t.upper() == "CREATE"
			start = false
		}
		if !create || t.kind != tokWord {
			continue
		}
		switch t.upper() {
		case "BEGIN":
			depth++
		case "END":
			if depth > 0 && (i+1 == len(code) || code[i+1].kind == tokSemicolon) {
				depth--
			}
		}
	}
	if last := code[len(code)-1]; last.kind == tokSemicolon && depth == 0 {
		return ends
	}
	return ends + 1
}

func notReadOnly(format string, args ...any) error {
	return node.FieldError(CodeNotReadOnly, "query", "is not provably read-only: "+format+"; use operation execute for statements that write", args...)
}

// firstWord is the first keyword after any opening parentheses.
func firstWord(code []token) string {
	for _, t := range code {
		if t.kind == tokPunct && t.text == "(" {
			continue
		}
		if t.kind == tokWord {
			return t.upper()
		}
		return ""
	}
	return ""
}

// checkReadOnly holds a query operation to the shape of a read: no
// comments, no dollar quotes, no backslash inside quotes (where the
// server's escaping mode could end a literal somewhere else than the lexer
// thinks), an allowed first keyword, and no keyword or function through
// which a write or lock could run.
func checkReadOnly(all, code []token, d dialect) error {
	for _, t := range all {
		switch {
		case t.kind == tokComment:
			return notReadOnly("comments are not allowed (%s)", commentForm(t.text))
		case t.kind == tokPunct && t.text == "--":
			return notReadOnly("-- is not allowed (it reads as a comment on some servers)")
		case t.kind == tokDollarString:
			return notReadOnly("dollar-quoted strings are not allowed")
		case t.backslash:
			return notReadOnly("backslashes inside quoted text are not allowed (servers differ on what they escape)")
		}
	}
	lead := 0
	for lead < len(code) && code[lead].kind == tokPunct && code[lead].text == "(" {
		lead++
	}
	if lead == len(code) {
		return notReadOnly("it holds only parentheses")
	}
	first := code[lead]
	if first.kind != tokWord || !readOnlyStarts[d][first.upper()] {
		return notReadOnly("it starts with %q; a query starts with %s", first.text, startList(d))
	}
	if lead > 0 {
		switch first.upper() {
		case "SELECT", "WITH", "VALUES", "TABLE":
		default:
			return notReadOnly("%s cannot follow a parenthesis", first.upper())
		}
	}
	for i, t := range code {
		if t.kind != tokWord {
			continue
		}
		w := t.upper()
		if why, bad := writeWords[w]; bad {
			return notReadOnly("%s is not allowed (%s)", w, why)
		}
		if w == "FOR" && i+1 < len(code) && code[i+1].kind == tokWord {
			switch code[i+1].upper() {
			case "SHARE", "KEY", "NO":
				return notReadOnly("FOR %s locks rows", code[i+1].upper())
			}
		}
		if i+1 < len(code) && code[i+1].kind == tokPunct && code[i+1].text == "(" && sideEffect(w) {
			return notReadOnly("function %s has effects beyond reading", strings.ToLower(w))
		}
	}
	return nil
}

func sideEffect(fn string) bool {
	if sideEffectFuncs[fn] {
		return true
	}
	for _, p := range sideEffectPrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

func commentForm(text string) string {
	switch {
	case strings.HasPrefix(text, "--"):
		return "--"
	case strings.HasPrefix(text, "#"):
		return "#"
	}
	return "/* */"
}

func startList(d dialect) string {
	order := []string{"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN", "DESCRIBE", "DESC"}
	var out []string
	for _, w := range order {
		if readOnlyStarts[d][w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, ", ")
}

// checkEmbeddedExecute refuses the SQLite statements that reach outside
// the database file: ATTACH, DETACH and VACUUM INTO. (The connection's
// authorizer refuses them again inside SQLite.)
func checkEmbeddedExecute(code []token) error {
	vacuum := false
	for _, t := range code {
		if t.kind != tokWord {
			continue
		}
		switch w := t.upper(); w {
		case "ATTACH", "DETACH":
			return node.FieldError(CodeStatementNotAllowed, "query", "%s is not allowed on the embedded database", w)
		case "VACUUM":
			vacuum = true
		case "INTO":
			if vacuum {
				return node.FieldError(CodeStatementNotAllowed, "query", "VACUUM INTO is not allowed on the embedded database")
			}
		}
	}
	return nil
}

// numberPlaceholders rewrites each ? token as $1, $2... for PostgreSQL,
// copying everything else as written.
func numberPlaceholders(src string, toks []token) string {
	var b strings.Builder
	last, n := 0, 0
	for _, t := range toks {
		if t.kind != tokPlaceholder {
			continue
		}
		n++
		b.WriteString(src[last:t.start])
		b.WriteString("$" + strconv.Itoa(n))
		last = t.end
	}
	b.WriteString(src[last:])
	return b.String()
}
