package logic

import (
	"context"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(ExecuteWorkflowSpec()) }

// CodeWorkflowFailed fails an Execute Workflow node whose child run failed.
const CodeWorkflowFailed = "WORKFLOW_FAILED"

// ExecuteWorkflowSpec is the Execute Workflow node: it runs another stored
// workflow to its end and returns the outputs of that workflow's Output
// nodes. Runs nest at most 16 deep.
func ExecuteWorkflowSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "execute_workflow",
		DisplayName: "Execute Workflow",
		Category:    node.CategoryLogic,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Runs another workflow and returns the outputs of its Output nodes.",
		Fields: []node.Field{
			{Name: "workflow_id", Kind: node.KindText, Required: true, Description: "id of the workflow to run"},
			{Name: "input", Kind: node.KindAny, Description: "payload the child's trigger emits; blank passes this node's input"},
			{Name: "variables", Kind: node.KindObject, Description: "initial variables of the child run"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort, node.ErrorPort},
		Output: node.Object(map[string]any{
			"workflow_id":  node.T("string"),
			"execution_id": node.T("string"),
			"success":      node.T("boolean"),
			"result":       node.T("", "the value of the child's last Output node, or null"),
			"outputs":      node.T("array", "the outputs of the child's Output nodes, in completion order"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &ExecuteWorkflow{WorkflowID: c.String("workflow_id"), Input: c.Value("input"), Variables: c.Object("variables")}, nil
		},
	}
}

// ExecuteWorkflow is a configured Execute Workflow node.
type ExecuteWorkflow struct {
	WorkflowID string
	Input      any
	Variables  map[string]any
}

// Run runs the child workflow and waits for it.
func (x *ExecuteWorkflow) Run(ctx context.Context, env node.Env) (node.Result, error) {
	in := x.Input
	if value.Blank(in) {
		// An empty field, as an editor saves it, passes the input too.
		in = env.Input()
	}
	res, err := env.RunWorkflow(ctx, node.SubRun{WorkflowID: x.WorkflowID, Payload: in, Variables: x.Variables})
	if err != nil {
		return node.Result{}, err
	}
	if !res.Success {
		return node.Result{}, node.Errorf(CodeWorkflowFailed, "workflow %s failed (%s): %s", x.WorkflowID, res.ErrorCode, res.Error)
	}
	outputs := res.Outputs
	if outputs == nil {
		outputs = []any{}
	}
	var result any
	if len(outputs) > 0 {
		if m, ok := outputs[len(outputs)-1].(map[string]any); ok {
			result = m["value"]
		}
	}
	return node.Result{Output: map[string]any{
		"workflow_id": x.WorkflowID, "execution_id": res.ExecutionID, "success": true,
		"result": result, "outputs": outputs,
	}}, nil
}
