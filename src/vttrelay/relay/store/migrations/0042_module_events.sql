-- The events a world reports with `module-notify` (a setting changed, ...), listed by
-- GET /auth/activity as `module_event` rows (accounts-auth.md §2.13, §10; kept 7 days).
-- depends: 0041_pairing_code_grants

CREATE TABLE module_event_logs (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    client_id TEXT NOT NULL DEFAULT '',
    world_title TEXT NOT NULL DEFAULT '',
    event_type TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX module_event_logs_account ON module_event_logs (account, created_at);
CREATE INDEX module_event_logs_age ON module_event_logs (created_at);
