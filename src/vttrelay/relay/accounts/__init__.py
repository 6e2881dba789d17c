"""Accounts: users with a password, their sessions, keys, connection tokens, pairing and key
requests (DESIGN §4, accounts-auth.md)."""
