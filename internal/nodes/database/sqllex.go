package database

import (
	"fmt"
	"strings"
)

// dialect is the SQL flavour a query is lexed as. The dialects differ in
// what quotes mean, which comment forms exist and what a parameter looks
// like; everything else the checks need is common.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
	dialectMySQL
)

func (d dialect) String() string {
	switch d {
	case dialectPostgres:
		return "PostgreSQL"
	case dialectMySQL:
		return "MySQL"
	}
	return "SQLite"
}

// tokenKind classifies a lexed token.
type tokenKind int

const (
	tokWord         tokenKind = iota // unquoted identifier or keyword
	tokQuotedIdent                   // "x" (PostgreSQL, SQLite), `x` (MySQL, SQLite), [x] (SQLite)
	tokString                        // '...' with any prefix lexed apart (E, N, X, B, _charset); "..." in MySQL
	tokDollarString                  // $tag$...$tag$ (PostgreSQL)
	tokNumber
	tokPlaceholder // ?
	tokOtherParam  // $1 (PostgreSQL); ?NNN, :name, @name, $name, #name (SQLite)
	tokSemicolon
	tokComment // -- ..., /* ... */, # ... (MySQL)
	tokPunct   // any other character, and MySQL's "--" that is not a comment
)

// token is one lexed token; text is src[start:end].
type token struct {
	kind       tokenKind
	start, end int
	text       string
	// backslash is set on quoted tokens whose body holds a backslash.
	backslash bool
	// executable marks a MySQL /*! ... */ or /*M! ... */ comment, whose body
	// the server runs.
	executable bool
}

// upper is the token's text in upper case (for keyword comparisons).
func (t token) upper() string { return strings.ToUpper(t.text) }

// lexError is a query the lexer cannot split into tokens.
type lexError struct {
	pos int
	msg string
}

func (e *lexError) Error() string { return fmt.Sprintf("%s at character %d", e.msg, e.pos+1) }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart: letters, underscore and any byte of a multi-byte UTF-8
// sequence, as all three dialects allow.
func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

// isIdentChar adds digits and $, which all three dialects accept inside an
// unquoted identifier.
func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// lexSQL splits src into tokens under the rules of d. It fails on an
// unterminated quote, quoted identifier, dollar quote or block comment: a
// query whose end the lexer cannot find is not one it can vouch for.
func lexSQL(src string, d dialect) ([]token, error) {
	var toks []token
	add := func(kind tokenKind, start, end int) *token {
		toks = append(toks, token{kind: kind, start: start, end: end, text: src[start:end]})
		return &toks[len(toks)-1]
	}
	next := func(i int) byte {
		if i < len(src) {
			return src[i]
		}
		return 0
	}
	i := 0
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case isSpace(c):
			i++

		case c == '\'':
			// PostgreSQL reads backslash escapes only in E'...' strings (with
			// standard_conforming_strings on); MySQL reads them everywhere
			// (unless NO_BACKSLASH_ESCAPES); SQLite never.
			escapes := d == dialectMySQL || (d == dialectPostgres && ePrefix(toks, start))
			end, bs, ok := scanQuoted(src, i, '\'', escapes)
			if !ok {
				return nil, &lexError{start, "unterminated string literal"}
			}
			add(tokString, start, end).backslash = bs
			i = end

		case c == '"':
			kind, escapes := tokQuotedIdent, false
			if d == dialectMySQL {
				// Without ANSI_QUOTES (the default), "..." is a string in MySQL.
				kind, escapes = tokString, true
			}
			end, bs, ok := scanQuoted(src, i, '"', escapes)
			if !ok {
				return nil, &lexError{start, "unterminated quoted text"}
			}
			add(kind, start, end).backslash = bs
			i = end

		case c == '`' && d != dialectPostgres:
			end, bs, ok := scanQuoted(src, i, '`', false)
			if !ok {
				return nil, &lexError{start, "unterminated quoted identifier"}
			}
			add(tokQuotedIdent, start, end).backslash = bs
			i = end

		case c == '[' && d == dialectSQLite:
			j := strings.IndexByte(src[i+1:], ']')
			if j < 0 {
				return nil, &lexError{start, "unterminated quoted identifier"}
			}
			end := i + 1 + j + 1
			add(tokQuotedIdent, start, end).backslash = strings.Contains(src[start:end], `\`)
			i = end

		case c == '-' && next(i+1) == '-':
			// MySQL starts a comment only with "-- " followed by white space
			// or a control character (or at the end); "--1" is minus minus 1.
			if d == dialectMySQL && i+2 < len(src) && src[i+2] > ' ' {
				add(tokPunct, start, i+2)
				i += 2
				continue
			}
			i = lineEnd(src, i)
			add(tokComment, start, i)

		case c == '#' && d == dialectMySQL:
			i = lineEnd(src, i)
			add(tokComment, start, i)

		case c == '/' && next(i+1) == '*':
			end, ok := blockCommentEnd(src, i, d == dialectPostgres)
			if !ok {
				return nil, &lexError{start, "unterminated comment"}
			}
			t := add(tokComment, start, end)
			if d == dialectMySQL {
				body := src[i+2:]
				t.executable = strings.HasPrefix(body, "!") || strings.HasPrefix(body, "M!")
			}
			i = end

		case c == '$' && d == dialectPostgres:
			switch {
			case isDigit(next(i + 1)):
				i++
				for i < len(src) && isDigit(src[i]) {
					i++
				}
				add(tokOtherParam, start, i)
			default:
				tag, ok := dollarTag(src, i)
				if !ok {
					add(tokPunct, start, i+1)
					i++
					continue
				}
				j := strings.Index(src[i+len(tag):], tag)
				if j < 0 {
					return nil, &lexError{start, "unterminated dollar-quoted string"}
				}
				end := i + len(tag) + j + len(tag)
				add(tokDollarString, start, end)
				i = end
			}

		case d == dialectSQLite && (c == '$' || c == ':' || c == '@' || c == '#') && isIdentChar(next(i+1)):
			i++
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
			add(tokOtherParam, start, i)

		case c == '?':
			i++
			if d == dialectSQLite && isDigit(next(i)) {
				for i < len(src) && isDigit(src[i]) {
					i++
				}
				add(tokOtherParam, start, i)
				continue
			}
			add(tokPlaceholder, start, i)

		case c == ';':
			i++
			add(tokSemicolon, start, i)

		case isDigit(c):
			for i < len(src) && (isIdentChar(src[i]) || src[i] == '.') {
				i++
			}
			add(tokNumber, start, i)

		case isIdentStart(c) || (c == '$' && d == dialectMySQL):
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
			add(tokWord, start, i)

		default:
			i++
			add(tokPunct, start, i)
		}
	}
	return toks, nil
}

// ePrefix reports whether the quote at pos follows, with nothing between, a
// lone E (PostgreSQL's escape-string prefix).
func ePrefix(toks []token, pos int) bool {
	if len(toks) == 0 {
		return false
	}
	t := toks[len(toks)-1]
	return t.kind == tokWord && t.end == pos && (t.text == "E" || t.text == "e")
}

// scanQuoted finds the end of text quoted with q that starts at src[i]. A
// doubled quote stands for itself; with escapes, a backslash escapes the
// next byte. It returns the index after the closing quote and whether the
// body holds a backslash.
func scanQuoted(src string, i int, q byte, escapes bool) (end int, backslash, ok bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			backslash = true
			if escapes {
				j++
			}
		case q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1, backslash, true
		}
	}
	return 0, backslash, false
}

func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// blockCommentEnd finds the end of the /* comment at src[i]; PostgreSQL
// nests them.
func blockCommentEnd(src string, i int, nested bool) (int, bool) {
	depth := 0
	for j := i; j+1 < len(src); j++ {
		switch {
		case src[j] == '/' && src[j+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			j++
		case src[j] == '*' && src[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// dollarTag reads a PostgreSQL dollar-quote opening ($$ or $tag$) at src[i].
func dollarTag(src string, i int) (string, bool) {
	j := i + 1
	if j < len(src) && src[j] == '$' {
		return "$$", true
	}
	if j >= len(src) || !isIdentStart(src[j]) {
		return "", false
	}
	for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
		j++
	}
	if j < len(src) && src[j] == '$' {
		return src[i : j+1], true
	}
	return "", false
}
