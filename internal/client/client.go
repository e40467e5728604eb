// Package client is a typed Go client of the svc REST API, used by the
// command-line tools and the MCP bridge. It never follows redirects.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one server with one bearer token.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
}

// Options configure a Client.
type Options struct {
	// HTTPClient is used for requests; nil means one without redirects.
	HTTPClient *http.Client
}

// New returns a client of the server at baseURL (http or https).
func New(baseURL, token string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: %q is not an http or https URL", baseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Client{base: u, token: token, hc: hc}, nil
}

// Error is a response with a status of 300 or more (redirects are not
// followed).
type Error struct {
	Status int
	// Message is the server's {error}; empty for a body that is not one
	// (an empty-body 404 means the server has no such route).
	Message string
	// CurrentRowVersion is set on a 409 from a stale save.
	CurrentRowVersion int64
	// RetryAfter is the Retry-After header, if any.
	RetryAfter string
}

// Error formats the status and the server's message.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// do sends a request and decodes a JSON response into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, body any, header http.Header, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return resp.Header, responseError(resp, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("client: %s %s: decode response: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// responseError is the *Error of a response with a status of 300 or more
// and its body.
func responseError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	var eb struct {
		Error             string `json:"error"`
		CurrentRowVersion int64  `json:"current_row_version"`
	}
	if json.Unmarshal(body, &eb) == nil {
		e.Message, e.CurrentRowVersion = eb.Error, eb.CurrentRowVersion
	}
	return e
}

// Health is GET /api/health.
type Health struct {
	Status      string `json:"status"`
	Version     string `json:"version"`
	NodeBundled struct {
		Status  string `json:"status"`
		Version string `json:"version,omitempty"`
		Message string `json:"message,omitempty"`
	} `json:"node_bundled"`
}

// Health reads the server's health.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	_, err := c.do(ctx, http.MethodGet, "/api/health", nil, nil, &h)
	return &h, err
}

// WorkflowSummary is a list item.
type WorkflowSummary struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	UpdatedAt    time.Time `json:"updated_at"`
	Tags         []string  `json:"tags"`
	CollectionID *string   `json:"collection_id"`
}

// Page is a page of a list route.
type Page[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// WorkflowPage is a page of the workflow list.
type WorkflowPage = Page[WorkflowSummary]

// All reads every page of a list, list(limit, offset) reading one.
func All[T any](list func(limit, offset int) (*Page[T], error)) ([]T, error) {
	var all []T
	for {
		page, err := list(500, len(all))
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if len(page.Items) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// ListWorkflows reads a page of workflows; zero limit means the server's
// default.
func (c *Client) ListWorkflows(ctx context.Context, limit, offset int) (*WorkflowPage, error) {
	var p WorkflowPage
	_, err := c.do(ctx, http.MethodGet, paged("/api/workflows", limit, offset), nil, nil, &p)
	return &p, err
}

// paged adds limit and offset to a list route's path when they are set.
func paged(path string, limit, offset int) string {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// GetWorkflow returns a workflow document and its row version.
func (c *Client) GetWorkflow(ctx context.Context, id string) (json.RawMessage, int64, error) {
	var doc string
	h, err := c.do(ctx, http.MethodGet, "/api/workflows/"+url.PathEscape(id), nil, nil, &doc)
	if err != nil {
		return nil, 0, err
	}
	v, _ := strconv.ParseInt(strings.Trim(h.Get("ETag"), `"`), 10, 64)
	return json.RawMessage(doc), v, nil
}

// SaveWorkflow creates or replaces a workflow. ifMatch, when above zero, is
// the row version the save expects. It returns the new row version.
func (c *Client) SaveWorkflow(ctx context.Context, doc []byte, ifMatch int64) (int64, error) {
	var h http.Header
	if ifMatch > 0 {
		h = http.Header{"If-Match": {strconv.FormatInt(ifMatch, 10)}}
	}
	var out struct {
		RowVersion int64 `json:"row_version"`
	}
	_, err := c.do(ctx, http.MethodPost, "/api/workflows", map[string]string{"workflow_json": string(doc)}, h, &out)
	return out.RowVersion, err
}

// DeleteWorkflow deletes a workflow with its history.
func (c *Client) DeleteWorkflow(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/workflows/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Finding is a validation finding.
type Finding struct {
	Check   string `json:"check"`
	Message string `json:"message"`
	NodeID  string `json:"node_id,omitempty"`
	EdgeID  string `json:"edge_id,omitempty"`
}

// RunResult is the result of a synchronous run.
type RunResult struct {
	ExecutionID      string                     `json:"execution_id"`
	WorkflowID       string                     `json:"workflow_id"`
	Success          bool                       `json:"success"`
	Status           string                     `json:"status"`
	NodeOutputs      map[string]json.RawMessage `json:"node_outputs"`
	Logs             []json.RawMessage          `json:"logs"`
	Error            *string                    `json:"error"`
	ErrorCode        string                     `json:"error_code"`
	ErrorNodeID      string                     `json:"error_node_id"`
	ValidationErrors []Finding                  `json:"validation_errors"`
}

// RunWorkflow runs a workflow and waits for its result.
func (c *Client) RunWorkflow(ctx context.Context, id string, vars map[string]any) (*RunResult, error) {
	body := map[string]any{}
	if vars != nil {
		body["initial_variables"] = vars
	}
	var res RunResult
	_, err := c.do(ctx, http.MethodPost, "/api/workflows/"+url.PathEscape(id)+"/run", body, nil, &res)
	return &res, err
}

// Catalog is GET /api/nodes; each node is its descriptor as JSON.
type Catalog struct {
	EngineVersion string            `json:"engine_version"`
	Nodes         []json.RawMessage `json:"nodes"`
}

// Nodes reads the node catalog.
func (c *Client) Nodes(ctx context.Context) (*Catalog, error) {
	var cat Catalog
	_, err := c.do(ctx, http.MethodGet, "/api/nodes", nil, nil, &cat)
	return &cat, err
}

// Report is a validation report.
type Report struct {
	Valid      bool      `json:"valid"`
	BestEffort bool      `json:"best_effort"`
	Errors     []Finding `json:"errors"`
	Warnings   []Finding `json:"warnings"`
	ChecksRun  []string  `json:"checks_run"`
}

// Validate validates a workflow document without saving it.
func (c *Client) Validate(ctx context.Context, doc []byte) (*Report, error) {
	var r Report
	_, err := c.do(ctx, http.MethodPost, "/api/validate-workflow", map[string]string{"workflow_json": string(doc)}, nil, &r)
	return &r, err
}

// Token is a token record; Secret is set only by CreateToken.
type Token struct {
	Secret      string     `json:"token,omitempty"`
	ID          string     `json:"token_id"`
	Label       string     `json:"label"`
	Scopes      []string   `json:"scopes"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	WorkflowIDs []string   `json:"workflow_ids"`
	// ExpiresInSecs and Note are set by CreateToken.
	ExpiresInSecs *uint64 `json:"expires_in_secs,omitempty"`
	Note          string  `json:"note,omitempty"`
}

// TokenRequest creates a token. Nil Scopes means the server's default
// (read, write); zero ExpiresInSecs means no expiry.
type TokenRequest struct {
	Label         string   `json:"label"`
	Scopes        []string `json:"scopes,omitempty"`
	ExpiresInSecs uint64   `json:"expires_in_secs,omitempty"`
	WorkflowIDs   []string `json:"workflow_ids,omitempty"`
}

// CreateToken creates a token; the secret is in the result only.
func (c *Client) CreateToken(ctx context.Context, req TokenRequest) (*Token, error) {
	var t Token
	_, err := c.do(ctx, http.MethodPost, "/api/tokens", req, nil, &t)
	return &t, err
}

// ListTokens lists every token record.
func (c *Client) ListTokens(ctx context.Context) ([]Token, error) {
	var ts []Token
	_, err := c.do(ctx, http.MethodGet, "/api/tokens", nil, nil, &ts)
	return ts, err
}

// RevokeToken revokes a token by id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/tokens/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Grants lists a token's workflow grants; empty means unrestricted.
func (c *Client) Grants(ctx context.Context, tokenID string) ([]string, error) {
	var out struct {
		WorkflowIDs []string `json:"workflow_ids"`
	}
	_, err := c.do(ctx, http.MethodGet, "/api/tokens/"+url.PathEscape(tokenID)+"/workflows", nil, nil, &out)
	return out.WorkflowIDs, err
}

// Grant lets a token reach a workflow (and confines it to its grants).
func (c *Client) Grant(ctx context.Context, tokenID, workflowID string) error {
	_, err := c.do(ctx, http.MethodPost, "/api/tokens/"+url.PathEscape(tokenID)+"/workflows/"+url.PathEscape(workflowID), nil, nil, nil)
	return err
}

// Ungrant removes a grant; the server refuses to remove the last one.
func (c *Client) Ungrant(ctx context.Context, tokenID, workflowID string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/tokens/"+url.PathEscape(tokenID)+"/workflows/"+url.PathEscape(workflowID), nil, nil, nil)
	return err
}

// Credential is a saved credential as listed (never its secret).
type Credential struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	CredType string `json:"cred_type"`
}

// CredentialRequest creates or, with Update, replaces a credential.
type CredentialRequest struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	CredType string `json:"cred_type,omitempty"`
	Update   bool   `json:"update,omitempty"`
}

// SaveCredential creates or replaces a credential.
func (c *Client) SaveCredential(ctx context.Context, req CredentialRequest) error {
	_, err := c.do(ctx, http.MethodPost, "/api/credentials", req, nil, nil)
	return err
}

// ListCredentials lists the saved credentials.
func (c *Client) ListCredentials(ctx context.Context) ([]Credential, error) {
	var cs []Credential
	_, err := c.do(ctx, http.MethodGet, "/api/credentials", nil, nil, &cs)
	return cs, err
}

// DeleteCredential deletes a credential.
func (c *Client) DeleteCredential(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/credentials/"+url.PathEscape(id), nil, nil, nil)
	return err
}
