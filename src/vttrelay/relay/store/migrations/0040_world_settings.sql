-- A known world's settings its owner changes over /auth/known-clients (accounts-auth.md §2.7,
-- §7.7-7.11): cross-world permissions (targets, scopes, calls per hour), the stored credential
-- a headless session logs in with and whether the relay may start it on demand; the world's
-- users as its last `player-list` named them (so they are listed while it is offline); and the
-- log of cross-world requests (GET /auth/remote-request-logs, kept 30 days).
-- depends: 0030_activity

ALTER TABLE known_clients ADD COLUMN allowed_targets TEXT NOT NULL DEFAULT '[]';  -- JSON list
ALTER TABLE known_clients ADD COLUMN remote_scopes TEXT NOT NULL DEFAULT '[]';    -- JSON list
ALTER TABLE known_clients ADD COLUMN remote_per_hour BIGINT NOT NULL DEFAULT 0;   -- 0: no limit
ALTER TABLE known_clients ADD COLUMN credential_id TEXT;                          -- credentials.id
ALTER TABLE known_clients ADD COLUMN auto_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE known_clients ADD COLUMN settings_updated_at DOUBLE PRECISION;

CREATE TABLE known_users (
    client_id TEXT NOT NULL,
    account TEXT NOT NULL,
    user_id TEXT NOT NULL,               -- the Foundry user's id
    name TEXT NOT NULL DEFAULT '',
    role INTEGER NOT NULL DEFAULT 0,     -- Foundry role 1-4
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (client_id, user_id)
);
CREATE INDEX known_users_account ON known_users (account);

CREATE TABLE remote_request_logs (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    source_client_id TEXT NOT NULL DEFAULT '',
    source_token_id TEXT NOT NULL DEFAULT '',
    target_client_id TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL DEFAULT '',
    success INTEGER NOT NULL DEFAULT 0,
    error_message TEXT NOT NULL DEFAULT '',
    source_ip TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX remote_request_logs_account ON remote_request_logs (account, created_at);
CREATE INDEX remote_request_logs_age ON remote_request_logs (created_at);
