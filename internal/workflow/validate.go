package workflow

import (
	"fmt"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// The check names of the validation report, in the order they run.
const (
	CheckParse          = "parse"
	CheckDuplicateIDs   = "duplicate_ids"
	CheckNodeTypes      = "node_types"
	CheckGraph          = "graph"
	CheckPortArity      = "port_arity"
	CheckPorts          = "ports"
	CheckTriggers       = "triggers"
	CheckRequiredConfig = "required_config"
)

// Checks lists the checks run on a document that parses.
var Checks = []string{
	CheckDuplicateIDs, CheckNodeTypes, CheckGraph, CheckPortArity, CheckPorts, CheckTriggers, CheckRequiredConfig,
}

// Finding is one problem found by a check. NodeID and EdgeID are set only
// when the finding points at a node or an edge. Messages name fields and
// ports, never config values.
type Finding struct {
	Check   string `json:"check"`
	Message string `json:"message"`
	NodeID  string `json:"node_id,omitempty"`
	EdgeID  string `json:"edge_id,omitempty"`
}

// Report is the result of a dry-run validation (spec/server.md section 2).
type Report struct {
	Valid      bool      `json:"valid"`
	BestEffort bool      `json:"best_effort"`
	Errors     []Finding `json:"errors"`
	Warnings   []Finding `json:"warnings"`
	ChecksRun  []string  `json:"checks_run"`
}

// Validate parses a document and checks it against the node types of reg.
// A document that does not parse gets one parse error and no other check.
func Validate(data []byte, reg *node.Registry) Report {
	w, err := Parse(data)
	if err != nil {
		return Report{
			BestEffort: true,
			Errors:     []Finding{{Check: CheckParse, Message: err.Error()}},
			Warnings:   []Finding{},
			ChecksRun:  []string{CheckParse},
		}
	}
	return w.Validate(reg)
}

// Validate runs the seven checks on a parsed document. It is best effort:
// config values are not type-checked, per-node rules are not repeated, and
// credentials, network access and sandbox limits are not visible to it.
func (w *Workflow) Validate(reg *node.Registry) Report {
	v := validator{w: w, reg: reg, byID: make(map[string]int, len(w.Nodes))}
	for i, n := range w.Nodes {
		if _, dup := v.byID[n.ID]; !dup {
			v.byID[n.ID] = i
		}
	}
	v.duplicateIDs()
	v.nodeTypes()
	v.graph()
	v.portArity()
	v.ports()
	v.triggers()
	v.requiredConfig()
	r := Report{
		Valid:      len(v.errors) == 0,
		BestEffort: true,
		Errors:     v.errors,
		Warnings:   v.warnings,
		ChecksRun:  append([]string(nil), Checks...),
	}
	if r.Errors == nil {
		r.Errors = []Finding{}
	}
	if r.Warnings == nil {
		r.Warnings = []Finding{}
	}
	return r
}

type validator struct {
	w        *Workflow
	reg      *node.Registry
	byID     map[string]int
	errors   []Finding
	warnings []Finding
}

func (v *validator) fail(f Finding) { v.errors = append(v.errors, f) }
func (v *validator) warn(f Finding) { v.warnings = append(v.warnings, f) }
func (v *validator) spec(i int) *node.Spec {
	s, _ := v.reg.Lookup(v.w.Nodes[i].NodeTypeID)
	return s
}

func (v *validator) duplicateIDs() {
	seen := map[string]int{}
	for _, n := range v.w.Nodes {
		seen[n.ID]++
		if seen[n.ID] == 2 {
			v.fail(Finding{Check: CheckDuplicateIDs, NodeID: n.ID, Message: "two or more nodes share this id"})
		}
	}
	clear(seen)
	for _, e := range v.w.Edges {
		seen[e.ID]++
		if seen[e.ID] == 2 {
			v.warn(Finding{Check: CheckDuplicateIDs, EdgeID: e.ID, Message: "two or more edges share this id"})
		}
	}
}

func (v *validator) nodeTypes() {
	for i, n := range v.w.Nodes {
		s := v.spec(i)
		switch {
		case s == nil && n.Disabled:
			v.warn(Finding{Check: CheckNodeTypes, NodeID: n.ID, Message: "node_type_id is not a registered node type (the node is disabled)"})
		case s == nil:
			v.fail(Finding{Check: CheckNodeTypes, NodeID: n.ID, Message: "node_type_id is not a registered node type"})
		case !s.Enabled:
			flag := s.EnableFlag
			if flag == "" {
				flag = "its --allow flag"
			}
			v.warn(Finding{Check: CheckNodeTypes, NodeID: n.ID, Message: "this node type is switched off on this server; it runs only with " + flag})
		}
	}
}

// graph reports the first of: an edge to a missing node, a cycle, no entry
// node, a node no entry node reaches. Edges into trigger nodes are not
// followed: a trigger is always an entry node.
func (v *validator) graph() {
	g := Analyze(v.w, v.reg)
	switch {
	case g.MissingEdge >= 0:
		e := v.w.Edges[g.MissingEdge]
		end := "to"
		if _, ok := v.byID[e.From]; !ok {
			end = "from"
		}
		v.fail(Finding{Check: CheckGraph, EdgeID: e.ID, Message: fmt.Sprintf("edge %s names a node that does not exist", end)})
	case g.Cycle >= 0:
		v.fail(Finding{Check: CheckGraph, NodeID: v.w.Nodes[g.Cycle].ID, Message: "the edges form a cycle through this node"})
	case len(v.w.Nodes) == 0:
		v.fail(Finding{Check: CheckGraph, Message: "the workflow has no nodes, so no entry node"})
	case len(g.Entries) == 0:
		v.fail(Finding{Check: CheckGraph, Message: "no entry node: every node has an incoming edge"})
	case g.Unreached >= 0:
		v.fail(Finding{Check: CheckGraph, NodeID: v.w.Nodes[g.Unreached].ID, Message: "no entry node reaches this node"})
	}
}

func (v *validator) portArity() {
	wires := map[[2]string]int{}
	for _, e := range v.w.Edges {
		ti, ok := v.byID[e.To]
		if _, fromOK := v.byID[e.From]; !ok || !fromOK {
			continue
		}
		port := ToPort(e)
		key := [2]string{e.To, port}
		wires[key]++
		if wires[key] < 2 || v.arity(ti, port) == node.ArityMany {
			continue
		}
		v.fail(Finding{Check: CheckPortArity, NodeID: e.To, EdgeID: e.ID,
			Message: fmt.Sprintf("two wires go into input port %q, which accepts one", port)})
		return
	}
}

func (v *validator) arity(i int, port string) node.Arity {
	s := v.spec(i)
	if s == nil {
		return node.ArityOne
	}
	in, _ := s.Ports(v.w.Nodes[i].Config)
	for _, p := range in {
		if p.ID == port {
			return p.Arity
		}
	}
	return node.ArityOne
}

func (v *validator) ports() {
	for _, e := range v.w.Edges {
		fi, fok := v.byID[e.From]
		ti, tok := v.byID[e.To]
		if fok {
			if s := v.spec(fi); s != nil {
				_, outs := s.Ports(v.w.Nodes[fi].Config)
				if !node.HasPort(outs, FromPort(e, s)) {
					v.warn(Finding{Check: CheckPorts, EdgeID: e.ID,
						Message: "edge leaves an output port its node does not declare; it carries nothing"})
				}
			}
		}
		if tok {
			if s := v.spec(ti); s != nil {
				ins, _ := s.Ports(v.w.Nodes[ti].Config)
				if !node.HasPort(ins, ToPort(e)) {
					v.warn(Finding{Check: CheckPorts, EdgeID: e.ID,
						Message: "edge enters an input port its node does not declare"})
				}
			}
		}
	}
}

func (v *validator) triggers() {
	for i, n := range v.w.Nodes {
		if s := v.spec(i); s != nil && s.Trigger && !n.Disabled {
			return
		}
	}
	v.warn(Finding{Check: CheckTriggers, Message: "no enabled trigger node: the workflow can only run on demand"})
}

func (v *validator) requiredConfig() {
	for i, n := range v.w.Nodes {
		s := v.spec(i)
		if s == nil || n.Disabled {
			continue
		}
		for _, f := range s.Fields {
			if !f.Required {
				continue
			}
			raw, ok := n.Config[f.Name]
			if f.Credential {
				if _, isRef := node.CredentialRef(raw); isRef {
					continue
				}
			}
			empty := !ok || value.Blank(raw)
			if f.Kind == node.KindAny {
				empty = raw == nil
			}
			if empty {
				v.warn(Finding{Check: CheckRequiredConfig, NodeID: n.ID, Message: fmt.Sprintf("required field %s is empty", f.Name)})
			}
		}
	}
}

// FromPort is the output port an edge leaves: its from_port, or the source's
// default output when from_port is empty.
func FromPort(e Edge, s *node.Spec) string {
	if e.FromPort != "" || s == nil {
		return e.FromPort
	}
	return s.DefaultOutput()
}

// ToPort is the input port an edge enters: its to_port, or "in".
func ToPort(e Edge) string {
	if e.ToPort == "" {
		return DefaultPortIn
	}
	return e.ToPort
}
