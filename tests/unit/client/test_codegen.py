"""The SDK covers the route table: every route has its typed method (sync and async), and the
generated modules are what `python -m vttrelay.client.codegen` writes from the current table."""

from __future__ import annotations

import inspect

from vttrelay.client import AsyncClient, Client
from vttrelay.client._routes import BY_KEY, ROUTES
from vttrelay.client.codegen import EXCLUDED, generated, plain_path, snake
from vttrelay.relay import routes as relay_routes


def test_every_route_has_an_sdk_method_or_a_reason_not_to() -> None:
    missing = [
        f"{r.method} {r.path}"
        for r in relay_routes.ROUTES
        if f"{r.method} {r.path}" not in EXCLUDED
        and f"{r.method} {plain_path(r.path)}" not in BY_KEY
    ]
    assert not missing, f"routes without an SDK method (run vttrelay.client.codegen): {missing}"
    table = {f"{r.method} {r.path}" for r in relay_routes.ROUTES}
    assert set(EXCLUDED) <= table, "an exclusion names a route that no longer exists"


def test_every_spec_is_a_method_of_both_clients_with_the_route_parameters() -> None:
    clients = (Client("http://127.0.0.1:9", "k"), AsyncClient("http://127.0.0.1:9", "k"))
    for spec in ROUTES:
        for client in clients:
            method = getattr(getattr(client, spec.group), spec.name)
            accepted = set(inspect.signature(method).parameters)
            wanted = {p.python for p in spec.params}
            assert wanted <= accepted, (type(client).__name__, spec.key, wanted - accepted)
            assert inspect.iscoroutinefunction(method) == (
                isinstance(client, AsyncClient) and spec.reply != "stream"
            ), spec.key
            assert inspect.isasyncgenfunction(method) is False


def test_the_generated_modules_are_up_to_date() -> None:
    for path, text in generated().items():
        assert path.read_text() == text, (
            f"{path.name} is stale: run python -m vttrelay.client.codegen and commit it"
        )


def test_snake_case_names() -> None:
    assert snake("actorUuid") == "actor_uuid"
    assert snake("autoHDThreshold") == "auto_hd_threshold"
    assert snake("rollNPC") == "roll_npc"
    assert snake("createChatMessage") == "create_chat_message"
    assert snake("skill-check") == "skill_check"
    assert snake("from") == "from_"
