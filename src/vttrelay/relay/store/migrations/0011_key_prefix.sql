-- The first 8 characters of an API key, kept so that a key list can show which key is which
-- (`c2f25bfd...`, as the reference lists them); the other 56 stay secret (only the hash is
-- stored). Keys made before this migration show no prefix.
-- depends: 0010_accounts

ALTER TABLE api_keys ADD COLUMN key_prefix TEXT NOT NULL DEFAULT '';
