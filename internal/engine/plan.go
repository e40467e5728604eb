package engine

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/svcrun/svc/internal/expr"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/workflow"
)

// plan is a workflow prepared for running: the graph with each edge's scope,
// the loop bodies, and each node's config split into static values and
// templates. A plan is immutable and may serve many runs.
type plan struct {
	wf     *workflow.Workflow
	nodes  []pnode
	edges  []pedge
	loops  []ploop
	byID   map[string]int
	byName map[string]int // -1 when several nodes share a name
	// refusal is set when the workflow must not run: validation errors, or a
	// loop shape the engine refuses.
	findings []workflow.Finding
	refusal  *failure
	// secrets are values typed into secret fields of static configs.
	secrets []string
}

type pnode struct {
	id       string
	spec     *node.Spec
	disabled bool
	retry    *workflow.Retry
	// in lists the live edges into the node; need is their count.
	in   []int
	need int
	// out lists the followed edges out of the node.
	out []int
	// wired holds the output ports with a followed edge.
	wired map[string]bool
	// errorRoute is set when a failure can leave through a wired error port.
	errorRoute bool
	// owner is the loop whose body holds the node, or -1; loop is the
	// node's own loop index when it is an enabled loop, or -1.
	owner, loop int

	cfg pconfig
}

// pconfig is a node's config ready for evaluation.
type pconfig struct {
	raw map[string]any
	// dynamic lists fields whose value holds expressions or a credential
	// reference; when empty the config is decoded once per plan.
	dynamic []pfield
	// usesNode and usesRun are set when an expression can read $node or
	// $run.
	usesNode, usesRun bool

	once   sync.Once
	runner node.Runner
	err    error
}

type pfield struct {
	name       string
	tmpl       *expr.Template // the value is one string with expressions
	deep       bool           // the value is a structure with expression strings inside
	credential bool
	secret     bool
}

type pedge struct {
	idx      int
	from, to int
	fromPort string
	toPort   string
	// live edges count toward their target's readiness in its scope.
	live bool
}

type ploop struct {
	node int
	body []int
	// each lists the live edges from the loop's each_item port.
	each []int
}

// Port ids the engine itself knows.
const (
	portEachItem = "each_item"
	portDone     = "done"
)

// compile prepares a workflow. It never fails: a workflow that must not run
// gets a plan with a refusal.
func compile(w *workflow.Workflow, reg *node.Registry) *plan {
	p := &plan{wf: w, byID: make(map[string]int, len(w.Nodes)), byName: map[string]int{}}
	report := w.Validate(reg)
	if !report.Valid {
		p.findings = report.Errors
		first := report.Errors[0]
		p.refusal = &failure{code: CodeInvalidWorkflow, nodeID: first.NodeID,
			msg: fmt.Sprintf("workflow is not valid: %s: %s", first.Check, first.Message)}
		return p
	}
	g := workflow.Analyze(w, reg)
	p.nodes = make([]pnode, len(w.Nodes))
	for i := range w.Nodes {
		n := &w.Nodes[i]
		p.byID[n.ID] = i
		if n.Name != "" {
			if _, dup := p.byName[n.Name]; dup {
				p.byName[n.Name] = -1
			} else {
				p.byName[n.Name] = i
			}
		}
		s, ok := reg.Lookup(n.NodeTypeID)
		if !ok {
			// Only a disabled node may have an unknown type (the validator
			// warns); it never runs.
			s = &node.Spec{TypeID: n.NodeTypeID}
		}
		pn := &p.nodes[i]
		*pn = pnode{id: n.ID, spec: s, disabled: n.Disabled, retry: n.Retry, owner: -1, loop: -1, wired: map[string]bool{}}
		if !s.Enabled && !n.Disabled {
			p.refusal = &failure{code: CodeNodeDisabled, nodeID: n.ID,
				msg: fmt.Sprintf("node %s: node type %s is switched off on this server%s", n.ID, s.TypeID, enableHint(s))}
			return p
		}
		p.secrets = pn.cfg.prepare(n.Config, s, p.secrets)
	}
	p.edges = make([]pedge, len(w.Edges))
	for ei, e := range w.Edges {
		from, to := g.From[ei], g.To[ei]
		pe := pedge{idx: ei, from: from, to: to, toPort: workflow.ToPort(e)}
		pe.fromPort = workflow.FromPort(e, p.nodes[from].spec)
		p.edges[ei] = pe
	}
	for i := range p.nodes {
		pn := &p.nodes[i]
		pn.out = g.Out[i]
		_, outs := pn.spec.Ports(w.Nodes[i].Config)
		for _, ei := range pn.out {
			pn.wired[p.edges[ei].fromPort] = true
		}
		pn.errorRoute = pn.wired[node.PortError] && node.HasPort(outs, node.PortError)
		if pn.spec.Control == node.ControlLoop && !pn.disabled {
			pn.loop = len(p.loops)
			p.loops = append(p.loops, ploop{node: i})
		}
	}
	if f := p.planLoops(g); f != nil {
		p.refusal = f
		return p
	}
	for ei := range p.edges {
		pe := &p.edges[ei]
		if pe.from < 0 || pe.to < 0 || !followed(g, ei) {
			continue
		}
		from, to := &p.nodes[pe.from], &p.nodes[pe.to]
		switch {
		case from.loop >= 0 && to.owner == from.loop:
			pe.live = pe.fromPort == portEachItem
		case from.owner == to.owner:
			pe.live = true
		}
		if pe.live {
			to.in = append(to.in, ei)
			to.need++
		}
	}
	for li := range p.loops {
		l := &p.loops[li]
		for _, ei := range p.nodes[l.node].out {
			if p.edges[ei].live && p.edges[ei].fromPort == portEachItem {
				l.each = append(l.each, ei)
			}
		}
	}
	return p
}

func followed(g *workflow.Graph, ei int) bool {
	for _, e := range g.In[g.To[ei]] {
		if e == ei {
			return true
		}
	}
	return false
}

// planLoops computes each enabled loop's body: every node reachable from its
// each_item port. A loop inside another loop's body, or a node inside the
// bodies of two loops, is refused.
func (p *plan) planLoops(g *workflow.Graph) *failure {
	for li := range p.loops {
		l := &p.loops[li]
		seen := map[int]bool{}
		var queue []int
		for _, ei := range p.nodes[l.node].out {
			if p.edges[ei].fromPort == portEachItem && !seen[p.edges[ei].to] {
				seen[p.edges[ei].to] = true
				queue = append(queue, p.edges[ei].to)
			}
		}
		for k := 0; k < len(queue); k++ {
			for _, ei := range g.Out[queue[k]] {
				if t := g.To[ei]; !seen[t] {
					seen[t] = true
					queue = append(queue, t)
				}
			}
		}
		l.body = queue
	}
	for li := range p.loops {
		outer := p.nodes[p.loops[li].node].id
		for _, b := range p.loops[li].body {
			if p.nodes[b].loop >= 0 {
				return &failure{code: CodeNestedLoop, nodeID: p.nodes[b].id,
					msg: fmt.Sprintf("loop %s is inside the body of loop %s; loops cannot be nested (disable the inner loop or move it after Done)", p.nodes[b].id, outer)}
			}
			if o := p.nodes[b].owner; o >= 0 && o != li {
				return &failure{code: CodeLoopOverlap, nodeID: p.nodes[b].id,
					msg: fmt.Sprintf("node %s is in the bodies of loops %s and %s; a node can belong to one loop body only", p.nodes[b].id, p.nodes[p.loops[o].node].id, outer)}
			}
			p.nodes[b].owner = li
		}
	}
	return nil
}

// prepare splits a config into static values and expression fields. It
// returns secrets with the static values of secret fields appended.
func (c *pconfig) prepare(raw map[string]any, s *node.Spec, secrets []string) []string {
	c.raw = raw
	for _, f := range s.Fields {
		v, ok := raw[f.Name]
		if !ok {
			continue
		}
		pf := pfield{name: f.Name, credential: f.Credential, secret: f.Secret || f.Credential}
		if _, isRef := node.CredentialRef(v); isRef && f.Credential {
			c.dynamic = append(c.dynamic, pf)
			continue
		}
		if f.Kind.Expressions() && !f.NoExpressions {
			if str, isStr := v.(string); isStr && expr.Has(str) {
				// A template that does not compile is kept with a nil
				// template and fails the node when it runs.
				t, err := expr.Compile(str)
				if err != nil || !t.Static() {
					pf.tmpl = t
					c.dynamic = append(c.dynamic, pf)
					c.usesNode = c.usesNode || (t != nil && t.UsesNode())
					c.usesRun = c.usesRun || (t != nil && t.UsesRun())
					continue
				}
			} else if hasDeep(v) {
				pf.deep = true
				c.dynamic = append(c.dynamic, pf)
				c.usesNode, c.usesRun = true, true
				continue
			}
		}
		if str, isStr := v.(string); isStr && pf.secret && str != "" {
			secrets = append(secrets, str)
		}
	}
	return secrets
}

// hasDeep reports whether a structure holds a string with an expression.
func hasDeep(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if hasDeep(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasDeep(e) {
				return true
			}
		}
	case string:
		return expr.Has(t)
	}
	return false
}

// static returns the runner of a config without expression fields, built
// once per plan.
func (c *pconfig) static(s *node.Spec) (node.Runner, error) {
	c.once.Do(func() {
		cfg, err := s.Decode(c.raw)
		if err != nil {
			c.err = err
			return
		}
		c.runner, c.err = s.New(cfg)
	})
	return c.runner, c.err
}

// evalDeep evaluates the expression strings inside a structure. It copies
// only the maps and slices on the way to a changed string and reports
// whether anything changed.
func evalDeep(v any, env *expr.Env) (any, bool, error) {
	switch t := v.(type) {
	case string:
		if !expr.Has(t) {
			return t, false, nil
		}
		tmpl, err := expr.Compile(t)
		if err != nil {
			return nil, false, err
		}
		out, err := tmpl.Eval(env)
		return out, true, err
	case map[string]any:
		var out map[string]any
		for k, e := range t {
			n, changed, err := evalDeep(e, env)
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = maps.Clone(t)
			}
			if changed {
				out[k] = n
			}
		}
		if out == nil {
			return t, false, nil
		}
		return out, true, nil
	case []any:
		var out []any
		for i, e := range t {
			n, changed, err := evalDeep(e, env)
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = slices.Clone(t)
			}
			if changed {
				out[i] = n
			}
		}
		if out == nil {
			return t, false, nil
		}
		return out, true, nil
	}
	return v, false, nil
}

// enableHint names the flag that switches a type on, when it has one.
func enableHint(s *node.Spec) string {
	if s.EnableFlag == "" {
		return ""
	}
	return "; start svc-server with " + s.EnableFlag + " to allow it"
}
