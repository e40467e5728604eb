package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Job is a row of GET /api/scheduler. TriggerKind is the job's trigger as
// a JSON document in a string, with a Webhook secret redacted.
type Job struct {
	WorkflowID   string     `json:"workflow_id"`
	WorkflowName string     `json:"workflow_name"`
	TriggerKind  string     `json:"trigger_kind"`
	Status       string     `json:"status"`
	AlwaysOn     bool       `json:"always_on"`
	RunCount     int64      `json:"run_count"`
	LastRunAt    *time.Time `json:"last_run_at"`
	NextRunAt    *time.Time `json:"next_run_at"`
	CreatedAt    time.Time  `json:"created_at"`
	LastError    *string    `json:"last_error"`
}

// JobPage is a page of the job list.
type JobPage = Page[Job]

// ListJobs reads a page of scheduled jobs; zero limit means the server's
// default.
func (c *Client) ListJobs(ctx context.Context, limit, offset int) (*JobPage, error) {
	var p JobPage
	_, err := c.do(ctx, http.MethodGet, paged("/api/scheduler", limit, offset), nil, nil, &p)
	return &p, err
}

// StartOptions are the optional fields of a job start.
type StartOptions struct {
	// AlwaysOn nil keeps the stored setting.
	AlwaysOn *bool `json:"always_on,omitempty"`
	// PortOverride replaces a Webhook trigger's port.
	PortOverride *int `json:"port_override,omitempty"`
}

// StartJob starts (or restarts) a workflow's background job. A rejected
// start is an *Error with status 400 and the scheduler's message.
func (c *Client) StartJob(ctx context.Context, id string, opts StartOptions) error {
	_, err := c.do(ctx, http.MethodPost, "/api/scheduler/"+url.PathEscape(id)+"/start", opts, nil, nil)
	return err
}

// StopJob stops a workflow's background job.
func (c *Client) StopJob(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodPost, "/api/scheduler/"+url.PathEscape(id)+"/stop", nil, nil, nil)
	return err
}
