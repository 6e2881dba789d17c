-- The relay's store: API keys, connection tokens, pairing codes, known worlds, settings.
-- One schema for SQLite and PostgreSQL: times are DOUBLE PRECISION unix seconds (REAL on
-- SQLite), counts BIGINT, flags INTEGER 0/1, lists and objects JSON text.
-- depends:

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    key_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,                -- JSON array
    client_ids TEXT NOT NULL,            -- JSON array; empty: every world of the account
    user_id TEXT,                        -- forced userId, or NULL
    expires_at DOUBLE PRECISION,         -- unix seconds, or NULL
    enabled INTEGER NOT NULL DEFAULT 1,
    rate_per_minute BIGINT,              -- NULL: the relay's default
    created_at DOUBLE PRECISION NOT NULL,
    last_used_at DOUBLE PRECISION,
    request_count BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_account ON api_keys (account);

CREATE TABLE connection_tokens (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    client_id TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    token_hash TEXT NOT NULL UNIQUE,
    ip_allow TEXT NOT NULL DEFAULT '',   -- comma-separated IPs/CIDRs; empty: any
    created_at DOUBLE PRECISION NOT NULL,
    revoked_at DOUBLE PRECISION
);

CREATE TABLE pairing_codes (
    code TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION
);

CREATE TABLE known_clients (
    client_id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}', -- JSON object: worldId, worldTitle, systemId, ...
    token_name TEXT NOT NULL DEFAULT '',
    first_seen DOUBLE PRECISION NOT NULL,
    last_seen DOUBLE PRECISION NOT NULL
);
CREATE INDEX known_clients_account ON known_clients (account);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
