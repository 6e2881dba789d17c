-- Browser pairing requests and app API-key requests (endpoints-beyond-seed §12).
-- A request is created by a world or an app without credentials and approved or refused by the
-- relay's owner (`vttrelay pair approve`, `vttrelay keys approve`). `expired` is never stored:
-- a pending request past `expires_at` is expired.
-- depends: 0001_initial

CREATE TABLE pair_requests (
    code TEXT PRIMARY KEY,               -- 8 characters of the pairing alphabet
    status TEXT NOT NULL DEFAULT 'pending',  -- pending, approved, denied, exchanged
    client_id TEXT,                      -- the asking world's id (upgrade requests)
    world_id TEXT NOT NULL,
    world_title TEXT NOT NULL DEFAULT '',
    system_id TEXT NOT NULL DEFAULT '',
    system_title TEXT NOT NULL DEFAULT '',
    system_version TEXT NOT NULL DEFAULT '',
    foundry_version TEXT NOT NULL DEFAULT '',
    remote_scopes TEXT NOT NULL DEFAULT '[]',  -- JSON array: requested cross-world scopes
    target_clients TEXT NOT NULL DEFAULT '[]',  -- JSON array: requested cross-world targets
    upgrade_only INTEGER NOT NULL DEFAULT 0,
    peer TEXT NOT NULL DEFAULT '',       -- address the request came from
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    account TEXT,                        -- set on approval
    pairing_code TEXT,                   -- the pairing code approval minted (pairing_codes)
    decided_at DOUBLE PRECISION
);
CREATE INDEX pair_requests_expiry ON pair_requests (expires_at);

CREATE TABLE key_requests (
    code TEXT PRIMARY KEY,               -- 6 characters of the pairing alphabet
    status TEXT NOT NULL DEFAULT 'pending',  -- pending, approved, denied, exchanged
    app_name TEXT NOT NULL,
    app_description TEXT NOT NULL DEFAULT '',
    app_url TEXT NOT NULL DEFAULT '',
    callback_url TEXT NOT NULL DEFAULT '',  -- set: web flow (exchange code); empty: device flow
    scopes TEXT NOT NULL,                -- JSON array: requested scopes
    client_ids TEXT NOT NULL DEFAULT '[]',  -- JSON array: suggested worlds
    suggested_monthly_limit BIGINT,
    suggested_expiry TEXT NOT NULL DEFAULT '',
    peer TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    account TEXT,                        -- set on approval
    key_id TEXT,                         -- the key approval created (api_keys.id)
    exchange_hash TEXT UNIQUE,           -- SHA-256 of the web flow's exchange code
    exchange_expires_at DOUBLE PRECISION,
    decided_at DOUBLE PRECISION
);
CREATE INDEX key_requests_expiry ON key_requests (expires_at);
