package trigger

import (
	"context"
	"strings"

	"github.com/svcrun/svc/internal/node"
)

func init() { node.Register(WebhookSpec()) }

// Webhook defaults and limits (spec/nodes.md, Webhook).
const (
	DefaultWebhookPort = 3456
	DefaultWebhookPath = "/webhook"
	// WebhookBodyLimit is the listener's body cap.
	WebhookBodyLimit = 1 << 20
	// CodeInvalidPort is the error code of a port outside 1024 to 65535.
	CodeInvalidPort = "INVALID_PORT"
	// CodeInvalidBody is the code in the output of a request whose body
	// is sent as JSON but does not parse.
	CodeInvalidBody = "INVALID_BODY"
)

// WebhookSpec is the Webhook trigger. The scheduler binds its listener and
// starts a run per request; the node emits that request.
func WebhookSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "webhook",
		DisplayName: "Webhook",
		Category:    node.CategoryTrigger,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Starts the workflow when an HTTP request reaches its listener on 127.0.0.1 (in the background: start the workflow's job). Emits the request's body, headers, method and path, and files for an attachments array.",
		Fields: []node.Field{
			{Name: "port", Kind: node.KindInteger, Default: DefaultWebhookPort, Min: node.Bound(1024), Max: node.Bound(65535), Strict: true,
				Code: CodeInvalidPort, Description: "listener port, 1024 to 65535 (the listener always binds 127.0.0.1)"},
			{Name: "path", Kind: node.KindText, Default: DefaultWebhookPath, Description: "request path; a leading / is added if missing"},
			{Name: "method", Kind: node.KindEnum, Enum: []string{"GET", "POST", "PUT", "ANY"}, FoldCase: true, Default: "ANY",
				Description: "accepted method; blank means ANY"},
			{Name: "secret", Kind: node.KindText, Description: "if set, requests must carry it in the x-webhook-secret header (it does not sign the body)"},
			{Name: "timeout_secs", Kind: node.KindInteger, Default: 60, Min: node.Bound(1), Max: node.Bound(86400),
				Description: "how long the caller waits for the workflow's Output before the listener answers 202"},
			{Name: "dedup_window_secs", Kind: node.KindInteger, Default: 0, Min: node.Bound(0), Max: node.Bound(86400),
				Description: "above 0, a request whose body was already seen inside the window does not run again (the caller still gets 200)"},
			{Name: "validate_timestamp", Kind: node.KindBoolean, Default: false,
				Description: "require header x-webhook-timestamp (Unix seconds or RFC 3339) no older than 5 minutes"},
		},
		Outputs: []node.Port{{ID: "triggered", Label: "Triggered"}, {ID: "error", Label: "Error"}},
		Output: node.Object(map[string]any{
			"body": map[string]any{}, "headers": node.T("object"), "method": node.T("string"), "path": node.T("string"),
			"files": map[string]any{"type": "array", "description": "present when the JSON body has an attachments array"},
			"error": map[string]any{"type": "object", "description": "{code: INVALID_BODY, message} when the body is sent as JSON but does not parse; the request then leaves through Error"},
		}),
		Trigger: true,
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(emitRequest), nil
		},
	}
}

// emitRequest emits the request; one carrying an error (a body sent as
// JSON that does not parse) leaves through the Error port.
func emitRequest(ctx context.Context, env node.Env) (node.Result, error) {
	res, err := emitPayload(ctx, env)
	if m, ok := res.Output.(map[string]any); ok && m["error"] != nil {
		res.Port = "error"
	}
	return res, err
}

// WebhookPath normalizes a configured path: blank is /webhook, and a
// leading / is added.
func WebhookPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return DefaultWebhookPath
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// emitPayload emits the event that started the run (the request, or the
// firing), or {} on a run started on demand.
func emitPayload(_ context.Context, env node.Env) (node.Result, error) {
	if p, ok := env.Payload(); ok {
		return node.Result{Output: p}, nil
	}
	return node.Result{Output: map[string]any{}}, nil
}
