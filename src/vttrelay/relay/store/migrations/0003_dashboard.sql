-- The web dashboard (src/vttrelay/dashboard): one-time sign-in tokens and browser sessions.
-- `account` NULL is the relay's operator (sees and manages every account); otherwise the owner
-- of that one account. Secrets are stored as SHA-256 hex digests only.
-- depends: 0002_pair_requests

CREATE TABLE dashboard_signin_tokens (
    token_hash TEXT PRIMARY KEY,
    account TEXT,                 -- NULL: operator
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION
);
CREATE INDEX dashboard_signin_tokens_expiry ON dashboard_signin_tokens (expires_at);

CREATE TABLE dashboard_sessions (
    session_hash TEXT PRIMARY KEY,
    account TEXT,                 -- NULL: operator
    csrf TEXT NOT NULL,           -- the session's CSRF token, sent back with every change
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
