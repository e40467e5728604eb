// Package store is svc's persistence seam: the types the server keeps and
// the Store interface that the embedded SQLite store (store/sqlite) and,
// later, a PostgreSQL store implement. storetest is the conformance suite
// every implementation passes.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kinds of failure.
var (
	// ErrNotFound is returned for an id that is not stored.
	ErrNotFound = errors.New("not found")
	// ErrPrecondition is returned by WorkflowPut when an expected row
	// version was given and the workflow does not exist.
	ErrPrecondition = errors.New("workflow no longer exists")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("store is closed")
	// ErrExists is returned when creating a record whose id is taken.
	ErrExists = errors.New("already exists")
	// ErrLastGrant is returned by GrantRemove for a token's only grant:
	// removing it would leave the token unrestricted.
	ErrLastGrant = errors.New("cannot remove a token's only workflow grant")
)

// VersionConflictError is returned by WorkflowPut when the expected row
// version is stale.
type VersionConflictError struct {
	Current int64
}

// Error names the current row version.
func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("workflow changed: current row_version is %d", e.Current)
}

// Workflow is a stored workflow.
type Workflow struct {
	ID           string
	Name         string
	Tags         []string
	CollectionID *string
	// Doc is the workflow document as JSON.
	Doc        []byte
	RowVersion int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WorkflowSummary is a list item: the first five fields of a workflow.
type WorkflowSummary struct {
	ID           string
	Name         string
	UpdatedAt    time.Time
	Tags         []string
	CollectionID *string
}

// ListOptions pages a list. IDs, when not nil, restricts it to those ids
// (a token's workflow grants) before paging.
type ListOptions struct {
	Limit, Offset int
	IDs           []string
}

// Run statuses as stored.
const (
	RunRunning   = "running"
	RunSuccess   = "success"
	RunFailed    = "failed"
	RunCancelled = "cancelled"
)

// Run is one run of a workflow.
type Run struct {
	ID         string
	WorkflowID string
	Status     string
	Trigger    string
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	ErrorCode  string
	Error      string
	// Result is the run result as JSON (outputs, logs, timings); empty
	// while running.
	Result []byte
}

// Token is a bearer token record. The secret is kept only as its hash.
type Token struct {
	ID         string
	Label      string
	Scopes     []string
	SecretHash string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	ExpiresAt  *time.Time
	// WorkflowIDs are the token's ACL grants, sorted; empty means the
	// token is unrestricted.
	WorkflowIDs []string
}

// Credential is a saved credential. The secret is stored only encrypted,
// by the caller: the store never sees it in clear.
type Credential struct {
	ID   string
	Name string
	Type string
	// Ciphertext is the encrypted secret. In CredentialPut with update
	// set, nil keeps the stored ciphertext.
	Ciphertext []byte
	// Provider, Model and BaseURL are metadata the REST routes never set.
	Provider, Model, BaseURL *string
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// Job statuses as stored.
const (
	JobActive  = "active"
	JobPaused  = "paused"
	JobDone    = "done"
	JobError   = "error"
	JobStopped = "stopped"
)

// Job is a workflow's background job: one per workflow.
type Job struct {
	WorkflowID   string
	WorkflowName string
	// Trigger is the trigger as JSON: {"type": <node type id>, "node_id":
	// ..., "config": {...}}. It holds a Webhook secret as saved; the API
	// redacts it.
	Trigger      []byte
	Status       string
	AlwaysOn     bool
	RunCount     int64
	LastRunAt    *time.Time
	NextRunAt    *time.Time
	CreatedAt    time.Time
	LastError    *string
	PortOverride *int
}

// Store keeps workflows, runs, variables and tokens. Implementations are
// safe for concurrent use. Writes are durable when they return.
type Store interface {
	WorkflowList(ctx context.Context, opts ListOptions) (items []WorkflowSummary, total int, err error)
	WorkflowGet(ctx context.Context, id string) (*Workflow, error)
	// WorkflowPut creates or replaces a workflow and returns its new row
	// version (1 on create). With ifMatch set, the stored version must
	// equal it: a stale one gives *VersionConflictError, a missing
	// workflow ErrPrecondition.
	WorkflowPut(ctx context.Context, w *Workflow, ifMatch *int64) (int64, error)
	// WorkflowDelete removes a workflow with its runs, job and reports.
	WorkflowDelete(ctx context.Context, id string) error

	// RunStart records a run as running. It does not wait for the write
	// to be durable: a run that was never finished is failed by
	// RunFailUnfinished on the next start.
	RunStart(ctx context.Context, r *Run) error
	// RunFinish records a run's outcome and waits until it is durable.
	RunFinish(ctx context.Context, r *Run) error
	RunGet(ctx context.Context, id string) (*Run, error)
	// RunList lists a workflow's runs, newest first.
	RunList(ctx context.Context, workflowID string, opts ListOptions) ([]Run, error)
	// RunFailUnfinished marks every run still recorded as running failed.
	RunFailUnfinished(ctx context.Context, reason string) (int, error)

	VariableGet(ctx context.Context, workflowID, key string) (v any, ok bool, err error)
	VariableSet(ctx context.Context, workflowID, key string, v any) error

	// TokenInsert stores a token, with its WorkflowIDs grants in the same
	// transaction, unless one with the same secret hash is
	// stored already; it reports whether it inserted.
	TokenInsert(ctx context.Context, t *Token) (bool, error)
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	TokenGet(ctx context.Context, id string) (*Token, error)
	// TokenList lists every token, oldest first.
	TokenList(ctx context.Context) ([]Token, error)
	// TokenRevoke marks a token revoked at the given time; a token revoked
	// already keeps its first revocation time. ErrNotFound if unknown.
	TokenRevoke(ctx context.Context, id string, at time.Time) error
	// GrantAdd grants a token access to a workflow (idempotent).
	// ErrNotFound if the token is unknown or revoked.
	GrantAdd(ctx context.Context, tokenID, workflowID string) error
	// GrantRemove removes a grant; a grant not held is no error.
	// ErrNotFound if the token is unknown; ErrLastGrant, changing nothing,
	// if it is the token's only grant.
	GrantRemove(ctx context.Context, tokenID, workflowID string) error

	// CredentialList lists every credential, ordered by id.
	CredentialList(ctx context.Context) ([]Credential, error)
	CredentialGet(ctx context.Context, id string) (*Credential, error)
	// CredentialPut creates a credential (update false: ErrExists if the
	// id is taken) or replaces one (update true: ErrNotFound if missing;
	// the creation time is kept, and a nil Ciphertext keeps the secret).
	CredentialPut(ctx context.Context, c *Credential, update bool) error
	// CredentialDelete removes a credential; ErrNotFound if unknown.
	CredentialDelete(ctx context.Context, id string) error
	// CredentialCount counts the saved credentials.
	CredentialCount(ctx context.Context) (int, error)

	// JobPut creates or replaces a workflow's job. On replace the creation
	// time is kept.
	JobPut(ctx context.Context, j *Job) error
	JobGet(ctx context.Context, workflowID string) (*Job, error)
	// JobList pages the jobs ordered by workflow id; opts.IDs filters
	// before paging and total counts the filtered jobs.
	JobList(ctx context.Context, opts ListOptions) (items []Job, total int, err error)
	// JobsAlwaysOn lists the jobs to start again after a restart: those
	// with AlwaysOn set and status active.
	JobsAlwaysOn(ctx context.Context) ([]Job, error)
	// JobDelete removes a job; a job not stored is no error.
	JobDelete(ctx context.Context, workflowID string) error

	Close() error
}
