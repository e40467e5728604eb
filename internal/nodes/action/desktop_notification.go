package action

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(NotificationSpec(Options{})) }

// Error codes of Desktop Notification.
const (
	// CodeInvalidTitle: title is missing or not text.
	CodeInvalidTitle = "INVALID_TITLE"
	// CodeInvalidBody: body is not text.
	CodeInvalidBody = "INVALID_BODY"
	// CodeInvalidUrgency: urgency is not one of Urgencies.
	CodeInvalidUrgency = "INVALID_URGENCY"
	// CodeNotifyError: the notifier is missing, failed, or was stopped;
	// the message holds its error output. Never retried.
	CodeNotifyError = "NOTIFY_ERROR"
)

// Urgencies are the urgency levels, as notify-send names them.
var Urgencies = []string{"low", "normal", "critical"}

// maxStderr is how much of the notifier's error output is kept.
const maxStderr = 4 << 10

// waitDelay bounds the wait for the notifier's output after it is stopped
// (a child it started may hold the pipe open).
const waitDelay = time.Second

var errNotifyTimeout = errors.New("notifier timed out")

// NotificationSpec is the Desktop Notification node: it shows a
// notification on the server's desktop. On Linux it runs notify-send
// (opts.NotifySend); on other systems it fails NOTIFY_ERROR.
func NotificationSpec(opts Options) *node.Spec {
	return &node.Spec{
		TypeID:      "desktop_notification",
		DisplayName: "Desktop Notification",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Shows a notification on the server's desktop (notify-send on Linux).",
		Fields: []node.Field{
			{Name: "title", Kind: node.KindText, Required: true, Code: CodeInvalidTitle, MissingCode: CodeInvalidTitle,
				Description: "the notification's title (text)"},
			{Name: "body", Kind: node.KindText, Code: CodeInvalidBody,
				Description: "the notification's text, optional"},
			{Name: "urgency", Kind: node.KindEnum, Enum: Urgencies, FoldCase: true, Default: "normal", Code: CodeInvalidUrgency,
				Description: "low, normal or critical; applied on Linux only"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output: node.Object(map[string]any{
			"sent": node.T("boolean", "true once the notifier has accepted the notification"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return NewNotification(Notification{Title: c.Value("title"), Body: c.Value("body"), Urgency: c.String("urgency")}, opts)
		},
	}
}

// Notification is a Desktop Notification node's config.
type Notification struct {
	// Title must be non-blank text.
	Title any
	// Body must be text, or nil for none.
	Body any
	// Urgency is one of Urgencies in any letter case; blank means normal.
	Urgency string
}

// DesktopNotification is a configured Desktop Notification node.
type DesktopNotification struct {
	title, body, urgency string
	program              string
	timeout              time.Duration
}

// NewNotification checks a config and returns the node.
func NewNotification(n Notification, opts Options) (*DesktopNotification, error) {
	title, ok := n.Title.(string)
	if !ok || value.Blank(title) {
		if n.Title == nil || ok {
			return nil, node.FieldError(CodeInvalidTitle, "title", "is required")
		}
		return nil, node.FieldError(CodeInvalidTitle, "title", "must be text, not %s", value.TypeName(n.Title))
	}
	body, ok := n.Body.(string)
	if !ok && n.Body != nil {
		return nil, node.FieldError(CodeInvalidBody, "body", "must be text, not %s", value.TypeName(n.Body))
	}
	urgency := strings.ToLower(strings.TrimSpace(n.Urgency))
	if urgency == "" {
		urgency = "normal"
	}
	valid := false
	for _, u := range Urgencies {
		valid = valid || u == urgency
	}
	if !valid {
		return nil, node.FieldError(CodeInvalidUrgency, "urgency", "%q is not one of %s", n.Urgency, strings.Join(Urgencies, ", "))
	}
	return &DesktopNotification{title: title, body: body, urgency: urgency,
		program: opts.notifySend(), timeout: opts.notifyTimeout()}, nil
}

// args are the notifier's arguments: the urgency, then the title and the
// body (when there is one) after "--", so that text starting with "-" is
// never read as an option.
func (d *DesktopNotification) args() []string {
	args := []string{"-u", d.urgency, "--", d.title}
	if d.body != "" {
		args = append(args, d.body)
	}
	return args
}

// Run runs the notifier and waits for it, at most the notify timeout.
func (d *DesktopNotification) Run(ctx context.Context, env node.Env) (node.Result, error) {
	if runtime.GOOS != "linux" {
		return node.Result{}, node.Errorf(CodeNotifyError, "desktop notifications are sent on Linux only; this server runs on %s", runtime.GOOS)
	}
	nctx, cancel := context.WithTimeoutCause(ctx, d.timeout, errNotifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(nctx, d.program, d.args()...)
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay
	ownProcessGroup(cmd)
	err := cmd.Run()
	switch {
	case err == nil:
		env.Logger().Info(fmt.Sprintf("notification sent (%s)", d.urgency))
		return node.Result{Output: map[string]any{"sent": true}}, nil
	case ctx.Err() != nil:
		return node.Result{}, &node.Error{Code: CodeNotifyError, Message: "notifier stopped: " + context.Cause(ctx).Error(), Err: ctx.Err()}
	case errors.Is(context.Cause(nctx), errNotifyTimeout):
		return node.Result{}, node.Errorf(CodeNotifyError, "%s did not finish within %s and was stopped%s", d.program, d.timeout, stderr.suffix())
	case errors.Is(err, exec.ErrNotFound):
		return node.Result{}, node.Errorf(CodeNotifyError, "%s was not found; install it (Debian package libnotify-bin)", d.program)
	}
	return node.Result{}, node.Errorf(CodeNotifyError, "%s failed (%v)%s", d.program, err, stderr.suffix())
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// suffix is ": <output>" for an error message, or "" with no output.
func (c *capped) suffix() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(c.buf), "?"))
	if s == "" {
		return ""
	}
	return ": " + s
}

var _ node.Runner = (*DesktopNotification)(nil)
