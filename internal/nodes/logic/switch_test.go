package logic

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestSwitchSpec(t *testing.T) {
	t.Parallel()
	s := SwitchSpec()
	if s.TypeID != "switch" || s.Category != node.CategoryLogic {
		t.Errorf("SwitchSpec() = %q in %q; want switch in logic", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	var want []node.Port
	for i := 1; i <= 8; i++ {
		want = append(want, node.Port{ID: fmt.Sprintf("case_%d", i), Label: fmt.Sprintf("Case %d", i)})
	}
	want = append(want, node.Port{ID: "default", Label: "Default"})
	if !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("switch"); !ok {
		t.Errorf("switch is not registered")
	}
}

func TestSwitchRun(t *testing.T) {
	t.Parallel()
	src := map[string]any{
		"status": 200,
		"code":   "200",
		"kind":   "Order",
		"flag":   true,
		"none":   nil,
		"body": map[string]any{
			"items": []any{map[string]any{"state": "ok"}, map[string]any{"state": "fail"}},
		},
	}
	three := []any{
		map[string]any{"match": "ok", "port": "case_1"},
		map[string]any{"match": "fail", "port": "case_2"},
		map[string]any{"match": "retry", "port": "case_3"},
	}
	tests := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"dot path with array index", map[string]any{"field": "body.items.1.state", "cases": three}, "case_2"},
		{"dot path first item", map[string]any{"field": "body.items.0.state", "cases": three}, "case_1"},
		{"cases as JSON text", map[string]any{"field": "body.items.1.state",
			"cases": `[{"match": "ok", "port": "case_1"}, {"match": "fail", "port": "case_2"}]`}, "case_2"},
		{"case without port gets its position", map[string]any{"field": "kind",
			"cases": []any{map[string]any{"match": "x"}, map[string]any{"match": "y"}, map[string]any{"match": "Order"}}}, "case_3"},
		{"blank port gets its position", map[string]any{"field": "kind",
			"cases": []any{map[string]any{"match": "x"}, map[string]any{"match": "Order", "port": ""}}}, "case_2"},
		{"port need not follow position", map[string]any{"field": "kind",
			"cases": []any{map[string]any{"match": "Order", "port": "case_7"}}}, "case_7"},
		{"first matching case wins", map[string]any{"field": "kind",
			"cases": []any{map[string]any{"match": "Order", "port": "case_4"}, map[string]any{"match": "Order", "port": "case_2"}}}, "case_4"},
		{"no match goes to default", map[string]any{"field": "kind", "cases": three}, "default"},
		{"custom default_port", map[string]any{"field": "kind", "cases": three, "default_port": "case_8"}, "case_8"},
		{"matching is case-sensitive", map[string]any{"field": "kind",
			"cases": []any{map[string]any{"match": "order"}, map[string]any{"match": "ORDER"}}}, "default"},
		{"exact, no trimming", map[string]any{"field": "kind", "cases": []any{map[string]any{"match": " Order"}}}, "default"},
		{"text 200 matches number 200", map[string]any{"field": "status", "cases": []any{map[string]any{"match": "200"}}}, "case_1"},
		{"number 200 matches text 200", map[string]any{"field": "code", "cases": []any{map[string]any{"match": 200}}}, "case_1"},
		{"number matches number", map[string]any{"field": "status", "cases": []any{map[string]any{"match": 201}, map[string]any{"match": 200.0}}}, "case_2"},
		{"text 200.0 does not match number 200", map[string]any{"field": "status", "cases": []any{map[string]any{"match": "200.0"}}}, "default"},
		{"boolean matches text true", map[string]any{"field": "flag", "cases": []any{map[string]any{"match": "true"}}}, "case_1"},
		{"boolean matches boolean", map[string]any{"field": "flag", "cases": []any{map[string]any{"match": false}, map[string]any{"match": true}}}, "case_2"},
		{"missing field goes to default", map[string]any{"field": "nope", "cases": []any{map[string]any{"match": ""}, map[string]any{"match": nil}}}, "default"},
		{"missing index goes to default", map[string]any{"field": "body.items.5.state", "cases": three}, "default"},
		{"null field matches null only", map[string]any{"field": "none", "cases": []any{map[string]any{"match": ""}, map[string]any{"match": "null"}, map[string]any{"match": nil}}}, "case_3"},
		{"blank field reads the whole output", map[string]any{"cases": []any{map[string]any{"match": "x"}, map[string]any{"match": src}}}, "case_2"},
		{"no cases", map[string]any{"field": "kind"}, "default"},
		{"empty cases", map[string]any{"field": "kind", "cases": "[]"}, "default"},
	}
	for _, tt := range tests {
		in := map[string]any{"passed": "through"}
		env := nodetest.New(in)
		env.Outs["fetch"] = src
		raw := map[string]any{"source_node": "fetch"}
		for k, v := range tt.raw {
			raw[k] = v
		}
		res, err := nodetest.Run(t.Context(), SwitchSpec(), raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if res.Port != tt.want {
			t.Errorf("%s: Port = %q; want %q", tt.name, res.Port, tt.want)
		}
		if !reflect.DeepEqual(res.Output, in) {
			t.Errorf("%s: Output = %#v; want the input %#v", tt.name, res.Output, in)
		}
	}
}

func TestSwitchSourceByName(t *testing.T) {
	t.Parallel()
	env := nodetest.New(nil)
	env.Outs["n7"] = map[string]any{"kind": "b"}
	env.Names = map[string]string{"Fetch": "n7"}
	res, err := nodetest.Run(t.Context(), SwitchSpec(), map[string]any{
		"source_node": "Fetch", "field": "kind", "cases": `[{"match":"a"},{"match":"b"}]`,
	}, env)
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if res.Port != "case_2" {
		t.Errorf("Port = %q; want case_2", res.Port)
	}
}

func TestSwitchSourceNotFound(t *testing.T) {
	t.Parallel()
	_, err := nodetest.Run(t.Context(), SwitchSpec(), map[string]any{"source_node": "ghost", "cases": `[{"match":1}]`}, nodetest.New(nil))
	nodetest.WantError(t, "unknown source", err, node.CodeSourceNotFound, "")
}

// TestSwitchSourceNotRun: a source that has not succeeded in this run has
// no field to match, so the input goes to the default port, even with a
// case matching null.
func TestSwitchSourceNotRun(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"", "kind"} {
		env := &nodetest.Env{In: "in", NotRun: map[string]bool{"skipped": true}}
		r, err := nodetest.Build(SwitchSpec(), map[string]any{
			"source_node": "skipped", "field": field, "cases": `[{"match": null}, {"match": ""}]`, "default_port": "case_5",
		})
		if err != nil {
			t.Fatalf("Build error: %v", err)
		}
		res, err := r.Run(t.Context(), env)
		if err != nil {
			t.Errorf("field %q: Run error: %v", field, err)
			continue
		}
		if res.Port != "case_5" {
			t.Errorf("field %q: Port = %q; want the default port case_5", field, res.Port)
		}
	}
}

func TestSwitchConfigErrors(t *testing.T) {
	t.Parallel()
	nine := make([]any, 9)
	for i := range nine {
		nine[i] = map[string]any{"match": i}
	}
	eight := nine[:8]
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"source_node required", map[string]any{"cases": eight}, "source_node"},
		{"blank source_node", map[string]any{"source_node": " "}, "source_node"},
		{"ninth case", map[string]any{"source_node": "s", "cases": nine}, "cases"},
		{"ninth case in text", map[string]any{"source_node": "s", "cases": string(mustJSON(t, nine))}, "cases"},
		{"typo port", map[string]any{"source_node": "s", "cases": `[{"match": 1, "port": "case1"}]`}, "cases[0].port"},
		{"port beyond 8", map[string]any{"source_node": "s", "cases": `[{"match": 1}, {"match": 2, "port": "case_9"}]`}, "cases[1].port"},
		{"port case_0", map[string]any{"source_node": "s", "cases": `[{"match": 1, "port": "case_0"}]`}, "cases[0].port"},
		{"port in capitals", map[string]any{"source_node": "s", "cases": `[{"match": 1, "port": "Case_1"}]`}, "cases[0].port"},
		{"port default in a case", map[string]any{"source_node": "s", "cases": `[{"match": 1, "port": "default"}]`}, "cases[0].port"},
		{"port not text", map[string]any{"source_node": "s", "cases": `[{"match": 1, "port": 2}]`}, "cases[0].port"},
		{"case without match", map[string]any{"source_node": "s", "cases": `[{"port": "case_1"}]`}, "cases[0].match"},
		{"case not an object", map[string]any{"source_node": "s", "cases": `["a"]`}, "cases[0]"},
		{"cases an object", map[string]any{"source_node": "s", "cases": `{"match": 1}`}, "cases"},
		{"cases not JSON", map[string]any{"source_node": "s", "cases": "case_1=a"}, "cases"},
		{"bad default_port", map[string]any{"source_node": "s", "default_port": "other"}, "default_port"},
		{"default_port case_9", map[string]any{"source_node": "s", "default_port": "case_9"}, "default_port"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(SwitchSpec(), tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
	// Eight cases are allowed.
	if _, err := nodetest.Build(SwitchSpec(), map[string]any{"source_node": "s", "cases": eight}); err != nil {
		t.Errorf("Build(8 cases) error: %v", err)
	}
}

func TestSwitchDefaultPortDefault(t *testing.T) {
	t.Parallel()
	r, err := nodetest.Build(SwitchSpec(), map[string]any{"source_node": "s", "default_port": ""})
	if err != nil {
		t.Fatalf("Build error: %v", err)
	}
	if got := r.(*Switch).DefaultPort; got != "default" {
		t.Errorf("DefaultPort = %q; want default", got)
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v, match any
		want     bool
	}{
		{"a", "a", true},
		{"a", "A", false},
		{200, "200", true},
		{"200", 200, true},
		{200.0, "200", true},
		{1.5, "1.5", true},
		{200, 200.0, true},
		{true, "true", true},
		{"false", false, true},
		{true, "True", false},
		{nil, nil, true},
		{nil, "", false},
		{nil, "null", false},
		{"", nil, false},
		{map[string]any{"a": 1}, map[string]any{"a": 1.0}, true},
		{map[string]any{"a": 1}, `{"a":1}`, false},
		{[]any{1}, "[1]", false},
		{"[1]", []any{1}, false},
	}
	for _, tt := range tests {
		if got := Matches(tt.v, tt.match); got != tt.want {
			t.Errorf("Matches(%#v, %#v) = %v; want %v", tt.v, tt.match, got, tt.want)
		}
	}
}
