-- One row per world connection on /relay (GET /auth/connection-logs, accounts-auth.md §2.13,
-- §10): who connected as which world, from where. Kept 90 days and at most the newest 1,000
-- rows per account; deleted with the account.
-- depends: 0011_key_prefix

CREATE TABLE connection_logs (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    client_id TEXT NOT NULL,
    token_name TEXT NOT NULL DEFAULT '',
    ip_address TEXT NOT NULL DEFAULT '',
    world_id TEXT NOT NULL DEFAULT '',
    world_title TEXT NOT NULL DEFAULT '',
    system_id TEXT NOT NULL DEFAULT '',
    foundry_version TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX connection_logs_account ON connection_logs (account, created_at);
CREATE INDEX connection_logs_age ON connection_logs (created_at);
