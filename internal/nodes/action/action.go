// Package action holds core action nodes that reach outside the run: HTTP
// Request, which calls an HTTP or HTTPS URL, and Desktop Notification, which
// shows a notification on the server's desktop through notify-send.
//
// Both are registered in node.Default with the zero Options; a server or a
// test that needs other settings replaces them in its registry clone with
// HTTPRequestSpec or NotificationSpec.
package action

import "time"

// Defaults of Options.
const (
	// DefaultRequestTimeout bounds one HTTP request: connecting, sending,
	// and reading the whole response.
	DefaultRequestTimeout = 300 * time.Second
	// DefaultNotifyTimeout is how long the notifier may run before it is
	// stopped (spec/nodes.md: 15 seconds).
	DefaultNotifyTimeout = 15 * time.Second
	// DefaultNotifySend is the notifier program on Linux (Debian package
	// libnotify-bin).
	DefaultNotifySend = "notify-send"
)

// Options configure the action nodes. The zero value of each field means
// its default.
type Options struct {
	// NotifySend is the program Desktop Notification runs on Linux: a name
	// looked up in PATH or a path. Empty means DefaultNotifySend.
	NotifySend string
	// NotifyTimeout stops the notifier when it has not finished; zero means
	// DefaultNotifyTimeout.
	NotifyTimeout time.Duration
	// RequestTimeout bounds one HTTP Request attempt from connecting to the
	// end of the response body; zero means DefaultRequestTimeout. Making
	// the connection is bounded by DialTimeout as well.
	RequestTimeout time.Duration
}

func (o Options) notifySend() string {
	if o.NotifySend == "" {
		return DefaultNotifySend
	}
	return o.NotifySend
}

func (o Options) notifyTimeout() time.Duration {
	if o.NotifyTimeout <= 0 {
		return DefaultNotifyTimeout
	}
	return o.NotifyTimeout
}

func (o Options) requestTimeout() time.Duration {
	if o.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return o.RequestTimeout
}
