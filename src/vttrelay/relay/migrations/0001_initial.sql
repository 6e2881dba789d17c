-- The relay's store: API keys, connection tokens, pairing codes, known worlds, settings.
-- depends:

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    key_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,            -- JSON array
    client_ids TEXT NOT NULL,        -- JSON array; empty: every world of the account
    user_id TEXT,                    -- forced userId, or NULL
    expires_at REAL,                 -- unix seconds, or NULL
    enabled INTEGER NOT NULL DEFAULT 1,
    rate_per_minute INTEGER,         -- NULL: the relay's default
    created_at REAL NOT NULL,
    last_used_at REAL,
    request_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_account ON api_keys (account);

CREATE TABLE connection_tokens (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    client_id TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    token_hash TEXT NOT NULL UNIQUE,
    ip_allow TEXT NOT NULL DEFAULT '',  -- comma-separated IPs/CIDRs; empty: any
    created_at REAL NOT NULL,
    revoked_at REAL
);

CREATE TABLE pairing_codes (
    code TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL
);

CREATE TABLE known_clients (
    client_id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',  -- JSON object: worldId, worldTitle, systemId, ...
    token_name TEXT NOT NULL DEFAULT '',
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL
);
CREATE INDEX known_clients_account ON known_clients (account);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
