package logic

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestLoopSpec(t *testing.T) {
	t.Parallel()
	s := LoopSpec()
	if s.TypeID != "loop" || s.Category != node.CategoryLogic || s.Control != node.ControlLoop {
		t.Errorf("LoopSpec() = %q in %q control %v; want loop in logic, ControlLoop", s.TypeID, s.Category, s.Control)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{{ID: "each_item", Label: "Each Item"}, {ID: "done", Label: "Done"}}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	props := s.Output["properties"].(map[string]any)
	for _, k := range []string{"items", "total", "item", "index", "all_results", "done"} {
		if _, ok := props[k]; !ok {
			t.Errorf("output schema has no %q", k)
		}
	}
	if _, ok := node.Default().Lookup("loop"); !ok {
		t.Errorf("loop is not registered")
	}
}

func seq(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestLoopRun(t *testing.T) {
	t.Parallel()
	five := seq(5)
	src := map[string]any{"data": map[string]any{"rows": five}, "text": "abc", "obj": map[string]any{}, "null": nil}
	tests := []struct {
		name string
		src  any
		raw  map[string]any
		want node.Iteration
	}{
		{"defaults", src, map[string]any{"array_field": "data.rows"},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"source is the array", []any{"a", "b"}, map[string]any{},
			node.Iteration{Items: []any{"a", "b"}, Total: 2, ItemVar: "item", IndexVar: "index"}},
		{"empty array", []any{}, map[string]any{},
			node.Iteration{Items: []any{}, Total: 0, ItemVar: "item", IndexVar: "index"}},
		{"array in an array", map[string]any{"pages": []any{[]any{1, 2}, []any{3}}}, map[string]any{"array_field": "pages.1"},
			node.Iteration{Items: []any{3}, Total: 1, ItemVar: "item", IndexVar: "index"}},
		{"custom variables", src, map[string]any{"array_field": "data.rows", "item_var": "row", "index_var": "i"},
			node.Iteration{Items: five, Total: 5, ItemVar: "row", IndexVar: "i"}},
		{"blank variables use defaults", src, map[string]any{"array_field": "data.rows", "item_var": " ", "index_var": ""},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"max_iterations lowers", src, map[string]any{"array_field": "data.rows", "max_iterations": 3},
			node.Iteration{Items: five[:3], Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"max_iterations as text", src, map[string]any{"array_field": "data.rows", "max_iterations": "2"},
			node.Iteration{Items: five[:2], Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"max_iterations above the count", src, map[string]any{"array_field": "data.rows", "max_iterations": 50},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"max_iterations 0 means no limit", src, map[string]any{"array_field": "data.rows", "max_iterations": 0},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"max_iterations blank means no limit", src, map[string]any{"array_field": "data.rows", "max_iterations": ""},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
		{"negative max_iterations clamps to no limit", src, map[string]any{"array_field": "data.rows", "max_iterations": -2},
			node.Iteration{Items: five, Total: 5, ItemVar: "item", IndexVar: "index"}},
	}
	for _, tt := range tests {
		env := nodetest.New("in")
		env.Outs["list"] = tt.src
		raw := map[string]any{"source_node": "list"}
		for k, v := range tt.raw {
			raw[k] = v
		}
		res, err := nodetest.Run(t.Context(), LoopSpec(), raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if res.Iterate == nil {
			t.Errorf("%s: Iterate = nil; want %+v", tt.name, tt.want)
			continue
		}
		if !reflect.DeepEqual(*res.Iterate, tt.want) {
			t.Errorf("%s: Iterate = %+v; want %+v", tt.name, *res.Iterate, tt.want)
		}
		if res.Stop || res.Port != "" {
			t.Errorf("%s: Result Stop %v Port %q; want neither (the engine picks the port)", tt.name, res.Stop, res.Port)
		}
	}
}

func TestLoopHardCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		n         int
		max       any
		wantItems int
		wantWarn  bool
	}{
		{"exactly the cap", MaxItems, nil, MaxItems, false},
		{"one over the cap", MaxItems + 1, nil, MaxItems, true},
		{"far over the cap", 25_000, nil, MaxItems, true},
		{"max_iterations cannot raise the cap", 25_000, 20_000, MaxItems, true},
		{"max_iterations below the cap is noted, not warned", 25_000, 100, 100, false},
	}
	for _, tt := range tests {
		arr := seq(tt.n)
		env := nodetest.New(nil)
		env.Outs["list"] = arr
		res, err := nodetest.Run(t.Context(), LoopSpec(), map[string]any{"source_node": "list", "max_iterations": tt.max}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		it := res.Iterate
		if len(it.Items) != tt.wantItems || it.Total != tt.n {
			t.Errorf("%s: %d items, total %d; want %d items, total %d", tt.name, len(it.Items), it.Total, tt.wantItems, tt.n)
		}
		if len(it.Items) > 0 && (it.Items[0] != 0 || it.Items[len(it.Items)-1] != tt.wantItems-1) {
			t.Errorf("%s: items run from %v to %v; want the first %d", tt.name, it.Items[0], it.Items[len(it.Items)-1], tt.wantItems)
		}
		if got := env.Logged("level=WARN"); got != tt.wantWarn {
			t.Errorf("%s: warning logged = %v (log %q); want %v", tt.name, got, env.Log(), tt.wantWarn)
		}
		if cut := len(it.Items) < tt.n; cut != env.Logged("runs the first") {
			t.Errorf("%s: log %q; want a line exactly when items are cut", tt.name, env.Log())
		}
	}
}

func TestLoopNotAnArray(t *testing.T) {
	t.Parallel()
	src := map[string]any{"text": "abc", "obj": map[string]any{"a": 1}, "null": nil, "num": 3}
	for _, field := range []string{"text", "obj", "null", "num", "missing", "text.x", ""} {
		env := nodetest.New(nil)
		env.Outs["list"] = src
		_, err := nodetest.Run(t.Context(), LoopSpec(), map[string]any{"source_node": "list", "array_field": field}, env)
		nodetest.WantError(t, "array_field "+field, err, node.CodeNotAnArray, "")
	}
	// A source that has not run in this run holds no array either.
	r, err := nodetest.Build(LoopSpec(), map[string]any{"source_node": "skipped"})
	if err != nil {
		t.Fatalf("Build error: %v", err)
	}
	_, err = r.Run(t.Context(), &nodetest.Env{NotRun: map[string]bool{"skipped": true}})
	nodetest.WantError(t, "source not run", err, node.CodeNotAnArray, "")
}

func TestLoopSourceNotFound(t *testing.T) {
	t.Parallel()
	_, err := nodetest.Run(t.Context(), LoopSpec(), map[string]any{"source_node": "ghost"}, nodetest.New(nil))
	nodetest.WantError(t, "unknown source", err, node.CodeSourceNotFound, "")
}

func TestLoopConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"source_node required", map[string]any{}, "source_node"},
		{"item_var equals index_var", map[string]any{"item_var": "x", "index_var": "x"}, "index_var"},
		{"index_var equals default item_var", map[string]any{"index_var": "item"}, "index_var"},
		{"item_var equals default index_var", map[string]any{"item_var": "index"}, ""},
		{"max_iterations unreadable", map[string]any{"max_iterations": "many"}, "max_iterations"},
		{"max_iterations fractional", map[string]any{"max_iterations": 2.5}, "max_iterations"},
	}
	for _, key := range reservedLoopKeys {
		if key != "item" {
			tests = append(tests, struct {
				name  string
				raw   map[string]any
				field string
			}{"item_var " + key, map[string]any{"item_var": key, "index_var": "i"}, "item_var"})
		}
		if key != "index" {
			tests = append(tests, struct {
				name  string
				raw   map[string]any
				field string
			}{"index_var " + key, map[string]any{"index_var": key, "item_var": "it"}, "index_var"})
		}
	}
	for _, tt := range tests {
		raw := map[string]any{"source_node": "list"}
		if tt.name == "source_node required" {
			raw = map[string]any{}
		}
		for k, v := range tt.raw {
			raw[k] = v
		}
		_, err := nodetest.Build(LoopSpec(), raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
	// The defaults themselves, and keys that are not reserved, are fine.
	for _, raw := range []map[string]any{
		{"item_var": "item", "index_var": "index"},
		{"item_var": "row", "index_var": "n"},
		{"item_var": "Items", "index_var": "TOTAL"},
	} {
		raw["source_node"] = "list"
		if _, err := nodetest.Build(LoopSpec(), raw); err != nil {
			t.Errorf("Build(%v) error: %v", raw, err)
		}
	}
}
