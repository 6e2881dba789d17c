"""The route table is the single source of truth: check its basic invariants."""

from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES, ROUTES


def test_every_route_is_unique_and_scoped_correctly() -> None:
    keys = [(r.method, r.path) for r in ROUTES]
    assert len(keys) == len(set(keys))
    for route in ROUTES:
        assert route.scope is None or route.scope in ALL_SCOPES, route.path
        if route.mode == "forward":
            assert route.action and route.scope, route.path
        if route.mode == "stream":
            assert route.channel and route.scope == "events:subscribe", route.path


def test_spec_endpoint_counts() -> None:
    dnd5e = [r for r in ROUTES if r.path.startswith("/dnd5e/")]
    chat = [r for r in ROUTES if r.group == "Chat"]
    utility = [r for r in ROUTES if r.group == "Utility"]
    assert (len(dnd5e), len(chat), len(utility)) == (21, 4, 5)
    assert set(DEFAULT_SCOPES) <= set(ALL_SCOPES)
    assert "execute-js" not in DEFAULT_SCOPES
