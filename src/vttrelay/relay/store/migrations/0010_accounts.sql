-- Accounts with a password (the /auth surface, accounts-auth.md): users, their sessions,
-- password-reset tokens, invite codes, stored Foundry credentials, notification settings, and
-- the scoped-key fields the /auth/api-keys routes manage. Secrets are stored as SHA-256 hex
-- digests (tokens) or argon2id hashes (passwords); Foundry passwords AES-GCM encrypted.
-- depends: 0003_dashboard

CREATE TABLE users (
    account TEXT PRIMARY KEY,            -- the account name its keys, tokens and worlds carry
    email TEXT NOT NULL UNIQUE,          -- the bare address, lower-cased
    password_hash TEXT NOT NULL,         -- argon2id, PHC string
    email_verified INTEGER NOT NULL DEFAULT 0,
    verification_hash TEXT UNIQUE,       -- SHA-256 of the pending verification token
    verification_expires_at DOUBLE PRECISION,
    role TEXT NOT NULL DEFAULT 'user',
    disabled INTEGER NOT NULL DEFAULT 0,
    master_key_id TEXT,                  -- api_keys.id of the account's master key, if any
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);

CREATE TABLE account_sessions (
    token_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    user_agent TEXT NOT NULL DEFAULT '',
    ip_address TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    last_used_at DOUBLE PRECISION
);
CREATE INDEX account_sessions_account ON account_sessions (account);
CREATE INDEX account_sessions_expiry ON account_sessions (expires_at);

CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION
);
CREATE INDEX password_resets_account ON password_resets (account);

CREATE TABLE invite_codes (
    code_hash TEXT PRIMARY KEY,
    note TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION,
    used_by TEXT                         -- the account it made
);

CREATE TABLE credentials (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT NOT NULL,
    foundry_url TEXT NOT NULL,
    foundry_username TEXT NOT NULL,
    password_ciphertext TEXT NOT NULL,   -- hex, AES-256-GCM without the tag
    password_nonce TEXT NOT NULL,        -- hex, 12 random bytes per encryption
    password_tag TEXT NOT NULL,          -- hex, the 16-byte GCM tag
    world TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX credentials_account ON credentials (account);

CREATE TABLE notification_settings (
    kind TEXT NOT NULL,                  -- account, key or world
    owner TEXT NOT NULL,                 -- the account, the key's id or the world's client id
    account TEXT NOT NULL,
    settings TEXT NOT NULL,              -- JSON object
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (kind, owner)
);
CREATE INDEX notification_settings_account ON notification_settings (account);

ALTER TABLE api_keys ADD COLUMN user_ids TEXT NOT NULL DEFAULT '{}';  -- JSON: clientId -> userId
ALTER TABLE api_keys ADD COLUMN monthly_limit BIGINT;                  -- NULL: none
ALTER TABLE api_keys ADD COLUMN usage_month TEXT NOT NULL DEFAULT '';  -- "2026-11"
ALTER TABLE api_keys ADD COLUMN month_requests BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN usage_day TEXT NOT NULL DEFAULT '';    -- "2026-11-27"
ALTER TABLE api_keys ADD COLUMN day_requests BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN updated_at DOUBLE PRECISION;
ALTER TABLE pairing_codes ADD COLUMN client_id TEXT;  -- set: the code pairs this world only
