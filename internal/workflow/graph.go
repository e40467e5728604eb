package workflow

import "github.com/svcrun/svc/internal/node"

// Graph is the shape of a document's wiring, shared by the validator and the
// engine. Node and edge numbers are indexes into Workflow.Nodes and
// Workflow.Edges; a duplicated node id refers to its first node.
type Graph struct {
	// In and Out list, per node, the edges followed into and out of it. An
	// edge is followed when both its nodes exist and it does not enter a
	// trigger node (a trigger is always an entry node).
	In, Out [][]int
	// From and To are each edge's node indexes, -1 for a missing node.
	From, To []int
	// Entries are the entry nodes in document order.
	Entries []int
	// MissingEdge is the first edge naming a node that does not exist, Cycle
	// a node on a cycle, Unreached the first node no entry reaches; -1 when
	// there is none.
	MissingEdge, Cycle, Unreached int
}

// Analyze computes the graph of w. Node types are looked up in reg to know
// which nodes are triggers; unknown types are ordinary nodes.
func Analyze(w *Workflow, reg *node.Registry) *Graph {
	n := len(w.Nodes)
	g := &Graph{
		In: make([][]int, n), Out: make([][]int, n),
		From: make([]int, len(w.Edges)), To: make([]int, len(w.Edges)),
		MissingEdge: -1, Cycle: -1, Unreached: -1,
	}
	byID := make(map[string]int, n)
	trigger := make([]bool, n)
	for i := range w.Nodes {
		if _, dup := byID[w.Nodes[i].ID]; !dup {
			byID[w.Nodes[i].ID] = i
		}
		if reg != nil {
			if s, ok := reg.Lookup(w.Nodes[i].NodeTypeID); ok && s.Trigger {
				trigger[i] = true
			}
		}
	}
	for ei, e := range w.Edges {
		from, fok := byID[e.From]
		to, tok := byID[e.To]
		g.From[ei], g.To[ei] = -1, -1
		if fok {
			g.From[ei] = from
		}
		if tok {
			g.To[ei] = to
		}
		if !fok || !tok {
			if g.MissingEdge < 0 {
				g.MissingEdge = ei
			}
			continue
		}
		if trigger[to] {
			continue
		}
		g.Out[from] = append(g.Out[from], ei)
		g.In[to] = append(g.In[to], ei)
	}
	for i := range w.Nodes {
		if len(g.In[i]) == 0 {
			g.Entries = append(g.Entries, i)
		}
	}
	g.Cycle = g.findCycle()
	reached := make([]bool, n)
	queue := append([]int(nil), g.Entries...)
	for _, i := range queue {
		reached[i] = true
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, ei := range g.Out[i] {
			if t := g.To[ei]; !reached[t] {
				reached[t] = true
				queue = append(queue, t)
			}
		}
	}
	for i, ok := range reached {
		if !ok {
			g.Unreached = i
			break
		}
	}
	return g
}

// findCycle returns a node on a cycle, or -1. Kahn's algorithm removes every
// node not on or after a cycle; from the first node left, following edges
// between left nodes must come back to a node already visited, which is on
// a cycle.
func (g *Graph) findCycle() int {
	n := len(g.In)
	indeg := make([]int, n)
	for i := range n {
		indeg[i] = len(g.In[i])
	}
	queue := make([]int, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for k := 0; k < len(queue); k++ {
		for _, ei := range g.Out[queue[k]] {
			t := g.To[ei]
			indeg[t]--
			if indeg[t] == 0 {
				queue = append(queue, t)
			}
		}
	}
	if len(queue) == n {
		return -1
	}
	start := -1
	for i := range n {
		if indeg[i] > 0 {
			start = i
			break
		}
	}
	visited := make([]bool, n)
	cur := start
	for !visited[cur] {
		visited[cur] = true
		// A node left over has an incoming edge from another left-over node;
		// walk those edges backwards so the walk stays among them.
		for _, ei := range g.In[cur] {
			if f := g.From[ei]; indeg[f] > 0 {
				cur = f
				break
			}
		}
	}
	return cur
}
