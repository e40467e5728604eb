// Package expr evaluates the {{ expression }} templates of text fields
// (DESIGN section 4) with expr-lang. A template is compiled once and cached
// by its source text; evaluation reuses pooled virtual machines.
//
// Names in scope: $vars (workflow variables), $run (id, workflow_id,
// started_at, trigger), $input (output of the node wired in) and $node
// (outputs of earlier nodes by id). A template that is exactly one
// expression, white space around it aside, keeps the value's JSON type;
// otherwise the parts are joined into text.
package expr

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/svcrun/svc/internal/value"
)

// Env is the scope an expression sees.
type Env struct {
	Vars  map[string]any `expr:"$vars" json:"$vars"`
	Run   map[string]any `expr:"$run" json:"$run"`
	Input any            `expr:"$input" json:"$input"`
	Node  map[string]any `expr:"$node" json:"$node"`
}

// Template is a compiled text with {{ }} expressions.
type Template struct {
	parts []part
	// single is set when the text is exactly one expression.
	single bool
	// usesNode and usesRun are set when an expression can read $node or
	// $run.
	usesNode, usesRun bool
}

type part struct {
	lit  string
	prog *vm.Program
}

// Has reports whether s contains an expression opening.
func Has(s string) bool { return strings.Contains(s, "{{") }

// SyntaxError is a template that does not compile.
type SyntaxError struct{ Msg string }

// Error returns the message.
func (e *SyntaxError) Error() string { return e.Msg }

// Compile compiles a template, or returns it from the shared cache.
func Compile(src string) (*Template, error) { return shared.Compile(src) }

// Cache is a bounded cache of compiled templates keyed by source text.
type Cache struct {
	mu  sync.Mutex
	max int
	m   map[string]cached
}

type cached struct {
	t   *Template
	err error
}

// NewCache returns a cache holding at most max templates. When full, an
// arbitrary half is dropped.
func NewCache(max int) *Cache { return &Cache{max: max, m: make(map[string]cached)} }

var shared = NewCache(8192)

// Compile compiles src or returns the cached result, errors included.
func (c *Cache) Compile(src string) (*Template, error) {
	c.mu.Lock()
	e, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return e.t, e.err
	}
	t, err := compile(src)
	c.mu.Lock()
	if len(c.m) >= c.max {
		n := 0
		for k := range c.m {
			delete(c.m, k)
			if n++; n >= c.max/2 {
				break
			}
		}
	}
	c.m[src] = cached{t, err}
	c.mu.Unlock()
	return t, err
}

func compile(src string) (*Template, error) {
	t := &Template{}
	rest := src
	exprs := 0
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			if rest != "" {
				t.parts = append(t.parts, part{lit: rest})
			}
			break
		}
		if open > 0 {
			t.parts = append(t.parts, part{lit: rest[:open]})
		}
		body, after, err := scanExpr(rest[open+2:])
		if err != nil {
			return nil, err
		}
		code := strings.TrimSpace(body)
		if code == "" {
			return nil, &SyntaxError{Msg: "empty expression {{ }}"}
		}
		prog, err := expr.Compile(code, expr.Env(Env{}), expr.MaxNodes(2000))
		if err != nil {
			return nil, &SyntaxError{Msg: "expression does not compile: " + err.Error()}
		}
		if strings.Contains(code, "$node") || strings.Contains(code, "$env") {
			t.usesNode = true
		}
		if strings.Contains(code, "$run") || strings.Contains(code, "$env") {
			t.usesRun = true
		}
		t.parts = append(t.parts, part{prog: prog})
		exprs++
		rest = after
	}
	if exprs == 1 {
		lits := 0
		for _, p := range t.parts {
			if p.prog == nil {
				if strings.TrimSpace(p.lit) != "" {
					lits++
				}
			}
		}
		if lits == 0 {
			t.single = true
			for _, p := range t.parts {
				if p.prog != nil {
					t.parts = []part{p}
					break
				}
			}
		}
	}
	return t, nil
}

// scanExpr finds the }} that closes an expression, skipping }} inside
// quoted strings. It returns the expression and the text after the braces.
func scanExpr(s string) (body, after string, err error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			return s[:i], s[i+2:], nil
		}
	}
	return "", "", &SyntaxError{Msg: "{{ is not closed by }}"}
}

// UsesNode reports whether an expression in the template can read $node.
func (t *Template) UsesNode() bool { return t.usesNode }

// UsesRun reports whether an expression in the template can read $run.
func (t *Template) UsesRun() bool { return t.usesRun }

// Static reports whether the template holds no expression.
func (t *Template) Static() bool {
	return len(t.parts) == 0 || (len(t.parts) == 1 && t.parts[0].prog == nil)
}

var vms = sync.Pool{New: func() any { return new(vm.VM) }}

// Eval evaluates the template. A single expression returns its value in the
// value model; several parts are joined into text. An expression that fails,
// or gives a value JSON cannot hold, returns an error.
func (t *Template) Eval(env *Env) (any, error) {
	if t.single {
		v, err := run(t.parts[0].prog, env)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.prog == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := run(p.prog, env)
		if err != nil {
			return nil, err
		}
		b.WriteString(value.Text(v))
	}
	return b.String(), nil
}

func run(p *vm.Program, env *Env) (any, error) {
	m := vms.Get().(*vm.VM)
	out, err := m.Run(p, env)
	vms.Put(m)
	if err != nil {
		return nil, err
	}
	if e, ok := out.(Env); ok {
		out = map[string]any{"$vars": e.Vars, "$run": e.Run, "$input": e.Input, "$node": e.Node}
	}
	n, err := value.Normalize(out)
	if err != nil {
		return nil, fmt.Errorf("expression result: %w", err)
	}
	return n, nil
}

// IsSyntax reports whether err is a compile error of a template.
func IsSyntax(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}
