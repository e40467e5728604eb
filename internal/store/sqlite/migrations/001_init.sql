-- svc schema, version 1. Times are Unix milliseconds.

CREATE TABLE workflows (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL,
	tags          TEXT NOT NULL DEFAULT '[]',  -- JSON array
	collection_id TEXT,
	doc           TEXT NOT NULL,               -- the workflow document, JSON
	row_version   INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	workflow_id TEXT NOT NULL,
	status      TEXT NOT NULL,                 -- running, success, failed, cancelled
	trigger     TEXT NOT NULL,
	started_at  INTEGER NOT NULL,
	finished_at INTEGER,
	error_code  TEXT,
	error       TEXT,
	result      TEXT                           -- run result JSON
);
CREATE INDEX runs_by_workflow ON runs (workflow_id, started_at);
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';

CREATE TABLE variables (
	workflow_id TEXT NOT NULL,
	key         TEXT NOT NULL,
	value       TEXT NOT NULL,                 -- JSON
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (workflow_id, key)
) WITHOUT ROWID;

CREATE TABLE tokens (
	id          TEXT PRIMARY KEY,
	label       TEXT NOT NULL,
	scopes      TEXT NOT NULL,                 -- JSON array
	secret_hash TEXT NOT NULL UNIQUE,
	created_at  INTEGER NOT NULL,
	revoked_at  INTEGER,
	expires_at  INTEGER
);

CREATE TABLE token_grants (
	token_id    TEXT NOT NULL REFERENCES tokens (id),
	workflow_id TEXT NOT NULL,
	PRIMARY KEY (token_id, workflow_id)
) WITHOUT ROWID;

-- Credentials: the value is encrypted by the server before it is stored.
CREATE TABLE credentials (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	cred_type  TEXT NOT NULL,
	ciphertext BLOB NOT NULL,
	provider   TEXT,
	model      TEXT,
	base_url   TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);

-- Background jobs of the scheduler, one per workflow.
CREATE TABLE jobs (
	workflow_id   TEXT PRIMARY KEY,
	workflow_name TEXT NOT NULL,
	trigger_kind  TEXT NOT NULL,               -- JSON
	status        TEXT NOT NULL,
	always_on     INTEGER NOT NULL DEFAULT 0,
	run_count     INTEGER NOT NULL DEFAULT 0,
	last_run_at   INTEGER,
	next_run_at   INTEGER,
	created_at    INTEGER NOT NULL,
	last_error    TEXT,
	port_override INTEGER,
	lease_owner   TEXT,
	lease_until   INTEGER
);

-- Stored performance reports, flattened with the run id.
CREATE TABLE perf_reports (
	run_id      TEXT PRIMARY KEY,
	workflow_id TEXT NOT NULL,
	started_at  INTEGER NOT NULL,
	report      TEXT NOT NULL                  -- JSON
);
CREATE INDEX perf_reports_by_workflow ON perf_reports (workflow_id, started_at);
