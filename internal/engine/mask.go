package engine

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret value in run results and logs.
const Mask = "***"

// masker replaces exact-text occurrences of secrets (spec/nodes.md rule 7):
// saved credential values and values typed into secret fields. Matching is
// exact text only; a secret transformed by a node (encoded, split) is not
// found.
type masker struct {
	mu      sync.Mutex
	secrets map[string]bool
	rep     *strings.Replacer
}

func newMasker(lists ...[]string) *masker {
	m := &masker{}
	for _, l := range lists {
		for _, s := range l {
			m.add(s)
		}
	}
	return m
}

func (m *masker) add(s string) {
	if s == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.secrets == nil {
		m.secrets = map[string]bool{}
	}
	if !m.secrets[s] {
		m.secrets[s] = true
		m.rep = nil
	}
}

func (m *masker) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Keys(m.secrets))
}

// replacer returns the replacer of the current secrets, longest first so a
// secret containing another is masked whole; nil when there are none.
func (m *masker) replacer() *strings.Replacer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.secrets) == 0 {
		return nil
	}
	if m.rep == nil {
		keys := slices.SortedFunc(maps.Keys(m.secrets), func(a, b string) int {
			return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
		})
		pairs := make([]string, 0, 2*len(keys))
		for _, k := range keys {
			pairs = append(pairs, k, Mask)
		}
		m.rep = strings.NewReplacer(pairs...)
	}
	return m.rep
}

// maskText masks a string.
func maskText(rep *strings.Replacer, s string) string {
	if rep == nil || s == "" {
		return s
	}
	return rep.Replace(s)
}

// maskValue masks every string (and object key) in a value, copying only
// the maps and slices on the way to a change.
func maskValue(rep *strings.Replacer, v any) any {
	if rep == nil {
		return v
	}
	out, _ := maskDeep(rep, v)
	return out
}

func maskDeep(rep *strings.Replacer, v any) (any, bool) {
	switch t := v.(type) {
	case string:
		m := rep.Replace(t)
		return m, m != t
	case map[string]any:
		var out map[string]any
		for k, e := range t {
			mk := rep.Replace(k)
			me, changed := maskDeep(rep, e)
			if !changed && mk == k {
				continue
			}
			if out == nil {
				out = maps.Clone(t)
			}
			delete(out, k)
			out[mk] = me
		}
		if out == nil {
			return t, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range t {
			me, changed := maskDeep(rep, e)
			if !changed {
				continue
			}
			if out == nil {
				out = slices.Clone(t)
			}
			out[i] = me
		}
		if out == nil {
			return t, false
		}
		return out, true
	}
	return v, false
}
