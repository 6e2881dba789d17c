-- The activity log (relay/activity.py): every API call's facts, never a secret, a body or a
-- query string. Written in batches: one row per account per write (every second or so), the
-- calls in `data` as a JSON array of [at, key_id, key_name, world, method, route, status, ms,
-- peer] arrays, so a busy relay writes one row a second, not one per request.
-- depends: 0011_key_prefix

CREATE TABLE activity_batches (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,        -- '' for calls that named no known key
    first_at DOUBLE PRECISION NOT NULL,
    last_at DOUBLE PRECISION NOT NULL,
    calls INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX activity_batches_last ON activity_batches (last_at);
CREATE INDEX activity_batches_account ON activity_batches (account, last_at);
