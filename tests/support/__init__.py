"""Helpers shared by the tests (imported as `tests.support.<module>`, not from conftest files)."""
