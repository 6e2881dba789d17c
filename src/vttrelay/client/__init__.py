"""A Python client for the relay API."""
