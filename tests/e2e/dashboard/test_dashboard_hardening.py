"""Issue 20 (hardening, round three), the dashboard's items, over real sockets: ids in form
actions (item 8)."""

from __future__ import annotations

import re
from typing import Any

TRAVERSAL = "z/../../keys/{key}/revoke?"


async def test_a_world_id_off_the_pattern_never_becomes_a_form_action(
    relay: Any, signin: Any
) -> None:
    """A world recorded before ids were checked (its id holds `/` and `..`) shows no button
    whose action a browser would resolve to another route (here: revoking another account's
    key)."""
    victim = relay.store.create_key("bob", ["world:info"])[0]
    bad = TRAVERSAL.format(key=victim)
    relay.store.remember_client(bad, "default", {"worldTitle": "Trap"})
    await relay.world("fvtt_0123456789abcdef")
    visitor = await signin(relay)
    status, page, _ = await visitor.get("/dashboard/worlds")
    assert status == 200
    actions = re.findall(r'action="([^"]*)"', page)
    assert "/dashboard/worlds/fvtt_0123456789abcdef/revoke" in actions
    assert not [a for a in actions if "keys" in a or ".." in a], actions
    assert relay.store.get_key(victim).enabled
