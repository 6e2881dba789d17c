"""The dashboard's worlds page over several instances: every live world of the account, wherever
it is connected ("on instance X" for the others'), and Disconnect of a world held elsewhere
(through the directory's close-token message)."""

from __future__ import annotations

from typing import Any

from tests.support.dashboard import signin  # noqa: F401  (the fixture, for this package's tests)
from tests.support.e2e import eventually


async def test_the_worlds_page_lists_and_disconnects_worlds_on_every_instance(
    cluster: Any,
    signin: Any,  # noqa: F811
) -> None:
    a, b = await cluster(2)
    here = await b.world("w-here")
    there = await a.world("w-there")
    await a.world("w-other", account="other")
    await eventually(lambda: b.state.registry.get("w-there") is not None)
    await eventually(lambda: b.state.registry.get("w-other") is not None)

    owner = await signin(b, "default")
    status, page, _ = await owner.get("/dashboard/worlds?part=live")
    assert status == 200
    assert 'data-client-id="w-here"' in page and 'data-client-id="w-there"' in page
    assert "w-other" not in page  # another account's world
    assert "on instance relay-0" in page  # the remote world says where it is
    assert page.count('class="online"') == 2
    operator = await signin(b)
    status, page, _ = await operator.get("/dashboard/worlds?part=live")
    assert page.count('class="online"') == 3

    # Disconnect of the world held on the other instance closes it there, as on one relay
    status, _, headers = await owner.post("/dashboard/worlds/w-there/disconnect", {})
    assert (status, headers["Location"]) == (303, "/dashboard/worlds?msg=disconnected")
    assert await there.wait_closed() == 1000
    await eventually(lambda: b.state.registry.get("w-there") is None)
    assert here.close_code is None
    status, page, _ = await owner.get("/dashboard/worlds?part=live")
    assert page.count('class="online"') == 1 and 'data-client-id="w-there"' in page  # offline

    # one that is no longer connected anywhere: 404, as on one relay
    assert (await owner.post("/dashboard/worlds/w-there/disconnect", {}))[0] == 404
