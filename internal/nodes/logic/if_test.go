package logic

import (
	"reflect"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestIfSpec(t *testing.T) {
	t.Parallel()
	s := IfSpec()
	if s.TypeID != "if" || s.Category != node.CategoryLogic {
		t.Errorf("IfSpec() = %q in %q; want if in logic", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{{ID: "true", Label: "True"}, {ID: "false", Label: "False"}}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("if"); !ok {
		t.Errorf("if is not registered")
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lhs  any
		op   string
		rhs  any
		want bool
	}{
		// Two numbers, or texts that read as numbers, compare as numbers.
		{5, "==", 5.0, true},
		{5, "==", "5", true},
		{" 5 ", "==", 5, true},
		{"1e3", "==", "1000", true},
		{"5.0", "==", "5", true},
		{1, "!=", 2, true},
		{1, "!=", "1.0", false},
		{"10", ">", "9", true},
		{"10", ">", 9, true},
		{10, "<", "9", false},
		{-1, "<", 0, true},
		{3, "<", 4, true},
		{4, "<=", 4, true},
		{5, "<=", 4, false},
		{5, ">=", 6, false},
		{6, ">=", "6", true},
		{2.5, ">", 2.25, true},
		// Anything else compares as text, ignoring case.
		{"Apple", "==", "apple", true},
		{"apple", "!=", "APPLE", false},
		{"apple", "!=", "pear", true},
		{"b", ">", "A", true},
		{"B", "<", "a", false},
		{"abc", "<", "abd", true},
		{"abc", ">=", "ABC", true},
		{"abc", "<=", "ABC", true},
		{"10", "<", "9a", true},
		{5, "==", "five", false},
		{true, "==", "TRUE", true},
		{true, "==", "yes", false},
		{false, "!=", true, true},
		{nil, "==", "", true},
		{nil, "==", "null", false},
		{[]any{1, 2}, "==", "[1,2]", true},
		// contains: text in text ignoring case, or an element of an array.
		{"Hello World", "contains", "world", true},
		{"Hello World", "contains", "WORLD", true},
		{"abc", "contains", "x", false},
		{"abc", "contains", "", true},
		{12345, "contains", 234, true},
		{[]any{1, 2, 3}, "contains", "2", true},
		{[]any{1, 2, 3}, "contains", 2.0, true},
		{[]any{1, 2, 3}, "contains", 4, false},
		{[]any{"a", "B"}, "contains", "b", true},
		{[]any{"ab"}, "contains", "a", false},
		{[]any{}, "contains", "", false},
		// An unknown operator never holds.
		{1, "~", 1, false},
	}
	for _, tt := range tests {
		if got := Compare(tt.lhs, tt.op, tt.rhs); got != tt.want {
			t.Errorf("Compare(%v, %q, %v) = %v; want %v", tt.lhs, tt.op, tt.rhs, got, tt.want)
		}
	}
}

func TestIfRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"default op is ==", map[string]any{"lhs": "a", "rhs": "A"}, "true"},
		{"== false", map[string]any{"lhs": "a", "rhs": "b"}, "false"},
		{"!=", map[string]any{"lhs": 1, "op": "!=", "rhs": 2}, "true"},
		{">", map[string]any{"lhs": "10", "op": ">", "rhs": "9"}, "true"},
		{">=", map[string]any{"lhs": 9, "op": ">=", "rhs": "10"}, "false"},
		{"<", map[string]any{"lhs": "2", "op": "<", "rhs": "10"}, "true"},
		{"<=", map[string]any{"lhs": 3, "op": "<=", "rhs": 3}, "true"},
		{"contains text", map[string]any{"lhs": "Order shipped", "op": "contains", "rhs": "SHIPPED"}, "true"},
		{"contains array", map[string]any{"lhs": []any{"x", "y"}, "op": "contains", "rhs": "Y"}, "true"},
		{"contains array miss", map[string]any{"lhs": []any{"x", "y"}, "op": "contains", "rhs": "z"}, "false"},
		{"lhs only compares to blank", map[string]any{"lhs": "x"}, "false"},
		{"rhs only compares to blank", map[string]any{"rhs": "x", "op": "!="}, "true"},
		{"lhs 0 is not blank", map[string]any{"lhs": 0, "condition": true}, "false"},
		{"condition ignored when lhs and rhs are set", map[string]any{"lhs": "a", "rhs": "a", "condition": "false"}, "true"},
		{"condition true", map[string]any{"condition": true}, "true"},
		{"condition false", map[string]any{"condition": false}, "false"},
		{"condition text true", map[string]any{"condition": "true"}, "true"},
		{"condition text TRUE", map[string]any{"condition": " TRUE "}, "true"},
		{"condition yes", map[string]any{"condition": "yes"}, "true"},
		{"condition no", map[string]any{"condition": "no"}, "false"},
		{"condition on", map[string]any{"condition": "on"}, "true"},
		{"condition text 1", map[string]any{"condition": "1"}, "true"},
		{"condition text 0", map[string]any{"condition": "0"}, "false"},
		{"condition number 1", map[string]any{"condition": 1}, "true"},
		{"condition number 0", map[string]any{"condition": 0}, "false"},
		{"condition number 2.5", map[string]any{"condition": 2.5}, "true"},
		{"condition with blank lhs and rhs", map[string]any{"lhs": "", "rhs": "  ", "condition": "yes"}, "true"},
	}
	for _, tt := range tests {
		in := map[string]any{"order": 7}
		env := nodetest.New(in)
		res, err := nodetest.Run(t.Context(), IfSpec(), tt.raw, env)
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
		if res.Stop || res.Iterate != nil {
			t.Errorf("%s: Result = %+v; want no Stop and no Iterate", tt.name, res)
		}
	}
}

func TestIfEmptyCondition(t *testing.T) {
	t.Parallel()
	for _, raw := range []map[string]any{
		{},
		{"condition": ""},
		{"condition": "   "},
		{"condition": nil},
		{"lhs": "", "rhs": "", "condition": ""},
	} {
		env := nodetest.New("in")
		res, err := nodetest.Run(t.Context(), IfSpec(), raw, env)
		if err != nil {
			t.Errorf("Run(%v) error: %v", raw, err)
			continue
		}
		if res.Port != "false" {
			t.Errorf("Run(%v) Port = %q; want false", raw, res.Port)
		}
		if !env.Logged("no condition") {
			t.Errorf("Run(%v) log = %q; want a message about the missing condition", raw, env.Log())
		}
	}
	// A condition that is set logs no such message.
	env := nodetest.New("in")
	if _, err := nodetest.Run(t.Context(), IfSpec(), map[string]any{"condition": "false"}, env); err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if env.Logged("no condition") {
		t.Errorf("log = %q; want no missing-condition message", env.Log())
	}
}

func TestIfConditionNotBoolean(t *testing.T) {
	t.Parallel()
	for _, cond := range []any{"maybe", "2", "{{ $input.x }}", map[string]any{"a": 1}, []any{true}} {
		_, err := nodetest.Run(t.Context(), IfSpec(), map[string]any{"condition": cond}, nodetest.New(nil))
		nodetest.WantError(t, "condition "+reflect.ValueOf(cond).Kind().String(), err, node.CodeInvalidConfig, "condition")
	}
}

func TestIfBadOp(t *testing.T) {
	t.Parallel()
	for _, op := range []any{"=~", "equals", "CONTAINS", "=", 1} {
		_, err := nodetest.Build(IfSpec(), map[string]any{"lhs": 1, "op": op, "rhs": 1})
		nodetest.WantError(t, "op", err, node.CodeInvalidConfig, "op")
	}
}
