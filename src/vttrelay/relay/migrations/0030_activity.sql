-- The activity log (relay/activity.py): one row per API call, written in batches. Facts only:
-- never a secret, a body or a query string. `hour` is the call's time in whole hours since the
-- epoch (the usage charts group by it: one integer rule on both engines).
-- depends: 0011_key_prefix

CREATE TABLE activity (
    at DOUBLE PRECISION NOT NULL,
    hour INTEGER NOT NULL,
    account TEXT NOT NULL,        -- '' when the call named no known key
    key_id TEXT NOT NULL,
    key_name TEXT NOT NULL,
    world TEXT NOT NULL,
    method TEXT NOT NULL,
    route TEXT NOT NULL,          -- the route-table path (`/get/{uuid}`), not the request's
    status INTEGER NOT NULL,
    ms DOUBLE PRECISION NOT NULL,
    peer TEXT NOT NULL
);
CREATE INDEX activity_at ON activity (at);
CREATE INDEX activity_account_at ON activity (account, at);
CREATE INDEX activity_key_hour ON activity (key_id, hour);
