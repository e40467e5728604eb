package logic

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestExecuteWorkflowSpec(t *testing.T) {
	t.Parallel()
	s := ExecuteWorkflowSpec()
	if s.TypeID != "execute_workflow" || s.Category != node.CategoryLogic {
		t.Errorf("ExecuteWorkflowSpec() = %q in %q; want execute_workflow in logic", s.TypeID, s.Category)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort, node.ErrorPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if _, ok := node.Default().Lookup("execute_workflow"); !ok {
		t.Errorf("execute_workflow is not registered")
	}
}

// childRecorder returns a Child func that records its request and answers
// with res and err.
func childRecorder(res node.SubResult, err error) (func(context.Context, node.SubRun) (node.SubResult, error), *[]node.SubRun) {
	var got []node.SubRun
	return func(_ context.Context, req node.SubRun) (node.SubResult, error) {
		got = append(got, req)
		return res, err
	}, &got
}

func TestExecuteWorkflowRequest(t *testing.T) {
	t.Parallel()
	in := map[string]any{"from": "input"}
	tests := []struct {
		name string
		raw  map[string]any
		want node.SubRun
	}{
		{"payload defaults to the input", map[string]any{"workflow_id": "wf-child"},
			node.SubRun{WorkflowID: "wf-child", Payload: in}},
		{"null input is blank", map[string]any{"workflow_id": "wf-child", "input": nil},
			node.SubRun{WorkflowID: "wf-child", Payload: in}},
		{"empty input text is blank", map[string]any{"workflow_id": "wf-child", "input": ""},
			node.SubRun{WorkflowID: "wf-child", Payload: in}},
		{"white space input is blank", map[string]any{"workflow_id": "wf-child", "input": "  "},
			node.SubRun{WorkflowID: "wf-child", Payload: in}},
		{"explicit input", map[string]any{"workflow_id": "wf-child", "input": map[string]any{"x": 1}},
			node.SubRun{WorkflowID: "wf-child", Payload: map[string]any{"x": 1}}},
		{"explicit text input", map[string]any{"workflow_id": "wf-child", "input": "hello"},
			node.SubRun{WorkflowID: "wf-child", Payload: "hello"}},
		{"explicit zero input", map[string]any{"workflow_id": "wf-child", "input": 0},
			node.SubRun{WorkflowID: "wf-child", Payload: 0}},
		{"variables", map[string]any{"workflow_id": "wf-child", "variables": map[string]any{"region": "eu"}},
			node.SubRun{WorkflowID: "wf-child", Payload: in, Variables: map[string]any{"region": "eu"}}},
		{"variables as JSON text", map[string]any{"workflow_id": "wf-child", "variables": `{"n": 2}`},
			node.SubRun{WorkflowID: "wf-child", Payload: in, Variables: map[string]any{"n": 2}}},
	}
	for _, tt := range tests {
		env := nodetest.New(in)
		child, got := childRecorder(node.SubResult{Success: true}, nil)
		env.Child = child
		if _, err := nodetest.Run(t.Context(), ExecuteWorkflowSpec(), tt.raw, env); err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if len(*got) != 1 || !reflect.DeepEqual((*got)[0], tt.want) {
			t.Errorf("%s: child requests = %+v; want [%+v]", tt.name, *got, tt.want)
		}
	}
}

func TestExecuteWorkflowOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		outputs    []any
		wantResult any
		wantOuts   []any
	}{
		{"no Output nodes", nil, nil, []any{}},
		{"one Output", []any{map[string]any{"value": 5, "label": "Result"}}, 5, []any{map[string]any{"value": 5, "label": "Result"}}},
		{"last Output wins", []any{
			map[string]any{"value": "first", "label": "A"},
			map[string]any{"value": map[string]any{"k": true}, "label": "B"},
		}, map[string]any{"k": true}, []any{
			map[string]any{"value": "first", "label": "A"},
			map[string]any{"value": map[string]any{"k": true}, "label": "B"},
		}},
		{"last Output holds null", []any{map[string]any{"value": "x"}, map[string]any{"value": nil}}, nil,
			[]any{map[string]any{"value": "x"}, map[string]any{"value": nil}}},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		env.Child, _ = childRecorder(node.SubResult{ExecutionID: "run-9", Success: true, Outputs: tt.outputs}, nil)
		res, err := nodetest.Run(t.Context(), ExecuteWorkflowSpec(), map[string]any{"workflow_id": "wf-child"}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		want := map[string]any{
			"workflow_id": "wf-child", "execution_id": "run-9", "success": true,
			"result": tt.wantResult, "outputs": tt.wantOuts,
		}
		if !reflect.DeepEqual(res.Output, want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, want)
		}
		if res.Port != "" && res.Port != node.PortOut {
			t.Errorf("%s: Port = %q; want out", tt.name, res.Port)
		}
	}
}

func TestExecuteWorkflowChildFailed(t *testing.T) {
	t.Parallel()
	env := nodetest.New(nil)
	env.Child, _ = childRecorder(node.SubResult{ExecutionID: "run-9", Success: false, ErrorCode: "HTTP_ERROR", Error: "fetch: 500"}, nil)
	_, err := nodetest.Run(t.Context(), ExecuteWorkflowSpec(), map[string]any{"workflow_id": "wf-child"}, env)
	nodetest.WantError(t, "child failure", err, CodeWorkflowFailed, "")
	if err != nil {
		for _, s := range []string{"wf-child", "HTTP_ERROR", "fetch: 500"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q; want it to hold %q", err, s)
			}
		}
	}
}

// TestExecuteWorkflowRunError: errors from RunWorkflow (unknown workflow,
// depth limit, cancellation) are returned as they are.
func TestExecuteWorkflowRunError(t *testing.T) {
	t.Parallel()
	notFound := node.Errorf("WORKFLOW_NOT_FOUND", "no workflow wf-x")
	for _, want := range []error{notFound, context.Canceled, errors.New("plain")} {
		env := nodetest.New(nil)
		env.Child, _ = childRecorder(node.SubResult{}, want)
		_, err := nodetest.Run(t.Context(), ExecuteWorkflowSpec(), map[string]any{"workflow_id": "wf-x"}, env)
		if err != want {
			t.Errorf("Run error = %v; want %v as it is", err, want)
		}
	}
}

func TestExecuteWorkflowConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"workflow_id required", map[string]any{}, "workflow_id"},
		{"blank workflow_id", map[string]any{"workflow_id": " "}, "workflow_id"},
		{"variables not an object", map[string]any{"workflow_id": "w", "variables": "[1]"}, "variables"},
		{"variables not JSON", map[string]any{"workflow_id": "w", "variables": "a=1"}, "variables"},
	}
	for _, tt := range tests {
		_, err := nodetest.Build(ExecuteWorkflowSpec(), tt.raw)
		nodetest.WantError(t, tt.name, err, node.CodeInvalidConfig, tt.field)
	}
}
