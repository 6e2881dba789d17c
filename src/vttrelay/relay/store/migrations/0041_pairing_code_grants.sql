-- The cross-world permissions an approved pair request grants a world that is not paired yet:
-- kept on the pairing code the approval mints, given to the world when it pairs with that code
-- (accounts-auth.md §2.6, §7.5).
-- depends: 0040_world_settings

ALTER TABLE pairing_codes ADD COLUMN remote_scopes TEXT NOT NULL DEFAULT '[]';    -- JSON list
ALTER TABLE pairing_codes ADD COLUMN allowed_targets TEXT NOT NULL DEFAULT '[]';  -- JSON list
