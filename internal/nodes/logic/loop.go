package logic

import (
	"context"
	"fmt"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(LoopSpec()) }

// MaxItems is the Loop's hard cap on iterations.
const MaxItems = 10_000

// reservedLoopKeys are the keys of the Loop's own output.
var reservedLoopKeys = []string{"items", "total", "item", "index", "all_results", "done"}

// LoopSpec is the Loop (For Each) node. It reads an array from a source
// node; the engine runs the body (every node reachable from Each Item) once
// per item, one after another, then leaves through Done.
func LoopSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "loop",
		DisplayName: "Loop (For Each)",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Runs the nodes after Each Item once per item of an array, then continues from Done.",
		Fields: []node.Field{
			{Name: "array_field", Kind: node.KindText, Description: "dot path to the array in the source output; blank when the output is the array"},
			{Name: "source_node", Kind: node.KindText, Required: true, Description: "id (or unique name) of the node whose output holds the array"},
			{Name: "item_var", Kind: node.KindText, Default: "item", Description: "variable ($vars.<name>) and output key holding the current item"},
			{Name: "index_var", Kind: node.KindText, Default: "index", Description: "variable ($vars.<name>) and output key holding the current index"},
			{Name: "max_iterations", Kind: node.KindInteger, Default: 0, Min: node.Bound(0),
				Description: "blank or 0 means no limit beyond the hard cap of 10,000; can only lower it"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{{ID: "each_item", Label: "Each Item"}, {ID: "done", Label: "Done"}},
		Output: node.Object(map[string]any{
			"items":       node.T("array", "the items; on Done, only those that ran"),
			"total":       node.T("integer", "number of items in the source array"),
			"item":        node.T("", "the current item (on Done, the last one that ran)"),
			"index":       node.T("", "the current index"),
			"all_results": node.T("array", "on Done: per iteration, the output of the last body node that produced one"),
			"done":        node.T("boolean"),
		}),
		Enabled: true,
		Control: node.ControlLoop,
		New:     newLoop,
	}
}

// Loop is a configured Loop node.
type Loop struct {
	ArrayField, Source string
	ItemVar, IndexVar  string
	Max                int
}

func newLoop(c node.Config) (node.Runner, error) {
	l := &Loop{
		ArrayField: c.String("array_field"), Source: c.String("source_node"),
		ItemVar: c.String("item_var"), IndexVar: c.String("index_var"), Max: c.Int("max_iterations"),
	}
	if l.ItemVar == l.IndexVar {
		return nil, node.ConfigError("index_var", "must differ from item_var")
	}
	for _, f := range []struct{ name, v, own string }{{"item_var", l.ItemVar, "item"}, {"index_var", l.IndexVar, "index"}} {
		for _, k := range reservedLoopKeys {
			if f.v == k && f.v != f.own {
				return nil, node.ConfigError(f.name, "is a key of the loop's own output (%s)", k)
			}
		}
	}
	return l, nil
}

// Run reads the array and hands the iteration to the engine.
func (l *Loop) Run(_ context.Context, env node.Env) (node.Result, error) {
	src, ok, err := env.Source(l.Source)
	if err != nil {
		return node.Result{}, err
	}
	if !ok {
		return node.Result{}, node.Errorf(node.CodeNotAnArray, "source node %s has no output in this run", l.Source)
	}
	v, found := value.Lookup(src, l.ArrayField)
	arr, isArr := v.([]any)
	if !found || !isArr {
		what := "nothing"
		if found {
			what = value.TypeName(v)
		}
		return node.Result{}, node.Errorf(node.CodeNotAnArray, "array_field: the source output holds %s there, not an array", what)
	}
	limit := MaxItems
	if l.Max > 0 {
		limit = min(limit, l.Max)
	}
	items := arr
	if len(arr) > limit {
		items = arr[:limit]
		if limit == MaxItems {
			env.Logger().Warn(fmt.Sprintf("the array has %d items; the loop runs the first %d (its hard cap)", len(arr), limit))
		} else {
			env.Logger().Info(fmt.Sprintf("the array has %d items; max_iterations runs the first %d", len(arr), limit))
		}
	}
	return node.Result{Iterate: &node.Iteration{Items: items, Total: len(arr), ItemVar: l.ItemVar, IndexVar: l.IndexVar}}, nil
}
