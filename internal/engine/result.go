package engine

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/svcrun/svc/internal/value"

	"github.com/svcrun/svc/internal/workflow"
)

// finish builds the run's result, masking secrets in outputs, logs and the
// error.
func (r *run) finish() *Result {
	end := time.Now()
	rep := r.mask.replacer()
	res := &Result{
		ExecutionID:      r.id,
		WorkflowID:       r.wfID,
		NodeOutputs:      make(map[string]any, len(r.p.nodes)),
		NodeStatus:       make(map[string]Status, len(r.p.nodes)),
		ValidationErrors: r.p.findings,
		StartedAt:        r.started,
		FinishedAt:       end,
		DurationMs:       float64(end.Sub(r.started).Microseconds()) / 1000,
		NodeTimings:      make(map[string]Timing, len(r.p.nodes)),
	}
	if res.ValidationErrors == nil {
		res.ValidationErrors = []workflow.Finding{}
	}
	switch {
	case r.fail != nil:
		res.Status = RunFailed
		msg := maskText(rep, r.fail.msg)
		res.Error, res.ErrorCode, res.ErrorNodeID = &msg, r.fail.code, r.fail.nodeID
	case r.cancelled:
		res.Status = RunCancelled
		msg := "run cancelled"
		res.Error, res.ErrorCode = &msg, CodeCancelled
	default:
		res.Status, res.Success = RunSuccess, true
	}
	for i := range r.p.nodes {
		id := r.p.nodes[i].id
		if r.hasOut[i] {
			res.NodeOutputs[id] = maskValue(rep, r.outputs[i])
		}
		switch r.st[i].status {
		case stSuccess:
			res.NodeStatus[id] = StatusSuccess
		case stSkipped:
			res.NodeStatus[id] = StatusSkipped
		case stFailed, stRunning:
			res.NodeStatus[id] = StatusError
		}
		if r.timings[i].Runs > 0 {
			res.NodeTimings[id] = r.timings[i]
		}
	}
	for _, o := range r.results {
		res.Outputs = append(res.Outputs, maskValue(rep, o.v))
		res.OutputNodeID = r.p.nodes[o.node].id
	}
	res.Logs = r.log.snapshot()
	for k := range res.Logs {
		res.Logs[k].Message = maskText(rep, res.Logs[k].Message)
		if res.Logs[k].Fields != nil {
			res.Logs[k].Fields, _ = maskValue(rep, res.Logs[k].Fields).(map[string]any)
		}
	}
	perf := "success"
	if !res.Success {
		perf = "failed"
	}
	res.Performance = r.meter.report(perf)
	return res
}

// MarshalJSON writes the result without reflection: the run result is
// encoded on every run the server answers and stores. The output is what
// encoding/json makes of the struct's field tags.
func (res *Result) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"execution_id":`...)
	b = value.AppendJSONString(b, res.ExecutionID)
	b = append(b, `,"workflow_id":`...)
	b = value.AppendJSONString(b, res.WorkflowID)
	b = append(b, `,"success":`...)
	b = strconv.AppendBool(b, res.Success)
	b = append(b, `,"status":`...)
	b = value.AppendJSONString(b, res.Status)
	b = append(b, `,"node_outputs":`...)
	var ok bool
	if b, ok = value.AppendJSON(b, anyMap(res.NodeOutputs)); !ok {
		return nil, errors.New("run result: a node output is not a JSON value")
	}
	b = append(b, `,"node_status":{`...)
	for i, k := range sortedKeys(res.NodeStatus) {
		if i > 0 {
			b = append(b, ',')
		}
		b = value.AppendJSONString(b, k)
		b = append(b, ':')
		b = value.AppendJSONString(b, string(res.NodeStatus[k]))
	}
	b = append(b, `},"logs":[`...)
	for i, l := range res.Logs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"at":"`...)
		b = l.At.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":`...)
		b = value.AppendJSONString(b, l.Level)
		if l.NodeID != "" {
			b = append(b, `,"node_id":`...)
			b = value.AppendJSONString(b, l.NodeID)
		}
		b = append(b, `,"message":`...)
		b = value.AppendJSONString(b, l.Message)
		if len(l.Fields) > 0 {
			b = append(b, `,"fields":`...)
			b, _ = value.AppendJSON(b, l.Fields)
		}
		b = append(b, '}')
	}
	b = append(b, `],"error":`...)
	if res.Error == nil {
		b = append(b, "null"...)
	} else {
		b = value.AppendJSONString(b, *res.Error)
	}
	if res.ErrorCode != "" {
		b = append(b, `,"error_code":`...)
		b = value.AppendJSONString(b, res.ErrorCode)
	}
	if res.ErrorNodeID != "" {
		b = append(b, `,"error_node_id":`...)
		b = value.AppendJSONString(b, res.ErrorNodeID)
	}
	b = append(b, `,"validation_errors":`...)
	if len(res.ValidationErrors) == 0 {
		b = append(b, "[]"...)
	} else {
		v, err := json.Marshal(res.ValidationErrors)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	b = append(b, `,"started_at":"`...)
	b = res.StartedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","finished_at":"`...)
	b = res.FinishedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","duration_ms":`...)
	b, _ = value.AppendJSON(b, res.DurationMs)
	b = append(b, `,"node_timings":{`...)
	for i, k := range sortedKeys(res.NodeTimings) {
		t := res.NodeTimings[k]
		if i > 0 {
			b = append(b, ',')
		}
		b = value.AppendJSONString(b, k)
		b = append(b, `:{"started_at_ms":`...)
		b = strconv.AppendInt(b, t.StartedAtMs, 10)
		b = append(b, `,"duration_ms":`...)
		b, _ = value.AppendJSON(b, t.DurationMs)
		b = append(b, `,"runs":`...)
		b = strconv.AppendInt(b, int64(t.Runs), 10)
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(t.Attempts), 10)
		b = append(b, '}')
	}
	return append(b, "}}"...), nil
}

func anyMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
