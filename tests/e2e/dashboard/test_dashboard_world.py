"""The world page in Debian's chromium, against a real relay and the real embedded demo world over
real sockets: a game master signs in (no API key anywhere), opens the world page, sees Elara's
HP change when a client damages her over REST, reads rolls and hit/miss lines in the feed,
advances the combat turn from the page and finds it in `GET /encounters`, damages, heals,
toggles a condition and posts to chat from the page (each checked over REST), follows a scene
switch made over REST, runs the goblin ambush (each goblin its own token with its own HP: one
damaged to 0 over REST is shown defeated while the other stays at full HP; the GM's damage goes
to that goblin's token, not to the Goblin actor), then filters the activity log to failures and
finds a 403 made a moment before, beside the page's own calls.

Set VTTRELAY_SCREENSHOTS=docs to write the README's world-page screenshots into docs/.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support.dashboard import sign_in_page
from tests.support.e2e import CLIENT_ID, api_for, eventually
from tests.support.files import data_url, png

ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"
PIP = "Actor.pipMonk000000001"
GOBLIN = "Actor.goblinNpc0000001"
AMBUSH = "Scene.sceneAmbush00001"
GOBLIN_1 = f"{AMBUSH}.Token.ambGoblin0000001"  # the ambush's two goblins: unlinked tokens
GOBLIN_2 = f"{AMBUSH}.Token.ambGoblin0000002"
HP = "system.attributes.hp.value"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
SCOPES = (
    "entity:read",
    "entity:write",
    "encounter:read",
    "encounter:manage",
    "chat:read",
    "effects:read",
    "file:write",
    "scene:write",
    "dnd5e",
)


def actor_row(page: Any, name: str) -> Any:
    return page.locator("li.actor", has=page.locator("strong.name", has_text=name))


async def test_a_gm_runs_the_table_from_the_world_page(
    relay: Any, world: Any, browser: Any
) -> None:
    api = api_for(relay, SCOPES)  # a client of the same account, over REST
    status, started = await api("POST", "/start-encounter", {"startWithPlayers": True})
    assert status == 200, started
    # Elara's portrait: a picture in the world's file store (the others have the tabletop
    # server's icon, not a file of the world: their initials are shown)
    portrait = {"path": "portraits", "filename": "elara.png", "mimeType": "image/png",
                "fileData": data_url("image/png", png(48, 48, (120, 60, 160)))}  # fmt: skip
    status, uploaded = await api("POST", "/upload", portrait)
    assert status == 200, uploaded
    status, _ = await api("PUT", "/update", {"data": {"img": uploaded["path"]}}, uuid=ELARA)
    assert status == 200

    page = await browser.new_page()
    await page.set_viewport_size(DESKTOP)
    await sign_in_page(page, relay, "default")
    await page.click(f"a.world-link[href$='/worlds/{CLIENT_ID}']")
    await page.wait_for_url(f"**/dashboard/worlds/{CLIENT_ID}")
    assert await page.locator("#w-live").text_content() != "not connected"
    elara = actor_row(page, "Elara Quill")
    await elara.locator(".hp-text", has_text="20 / 20 HP").wait_for()
    assert "AC" in await elara.locator(".facts").inner_text()
    picture = elara.locator("img.portrait")
    await picture.wait_for()
    assert (await picture.get_attribute("src") or "").startswith("data:image/png;base64,")
    assert await actor_row(page, "Brann Stoneheart").locator(".initials").inner_text() == "BS"
    await page.locator("#w-live", has_text="live").wait_for()

    # a client damages Elara over REST: the page follows the actor stream
    status, _ = await api("POST", "/decrease", {"attribute": HP, "amount": 7}, uuid=ELARA)
    assert status == 200
    await elara.locator(".hp-text", has_text="13 / 20 HP").wait_for()
    width = await elara.locator(".hpbar .fill").evaluate("n => n.style.width")
    assert width == "65%"

    # rolls and an attack card, as readable lines
    status, check = await api("POST", "/dnd5e/skill-check", {"actorUuid": PIP, "skill": "ste"})
    assert status == 200
    total = str(check["data"]["total"])
    pip_line = page.locator("#w-feed li", has_text="Pip Tealeaf")
    await pip_line.filter(has_text="Stealth").last.wait_for()
    assert total in await pip_line.last.locator(".total").inner_text()
    attack = {"actorUuid": BRANN, "abilityName": "Longsword", "targetUuid": GOBLIN}
    status, _ = await api("POST", "/dnd5e/use-ability", attack)
    assert status == 200
    outcome = page.locator("#w-feed .note-line", has_text="Goblin (AC 15)")
    await outcome.wait_for()
    assert (await outcome.inner_text()).startswith("Brann Stoneheart ")

    # the GM advances the turn from the page: GET /encounters says so
    tracker = page.locator("#w-tracker li.current")
    before = await tracker.inner_text()
    await page.click("#w-next")
    await page.wait_for_function(
        "b => document.querySelector('#w-tracker li.current')?.innerText !== b", arg=before
    )
    status, encounters = await api("GET", "/encounters")
    assert status == 200 and encounters["encounters"][0]["turn"] == 1
    current = encounters["encounters"][0]["combatants"][1]["name"]
    assert current in await tracker.inner_text()

    # damage, heal (never past the maximum), a condition on and off, a chat message
    brann = actor_row(page, "Brann Stoneheart")
    await brann.locator("input.amount").fill("5")
    await brann.locator("button.damage").click()
    await brann.locator(".hp-text", has_text="29 / 34 HP").wait_for()
    status, got = await api("GET", "/get", uuid=BRANN)
    assert got["data"]["system"]["attributes"]["hp"]["value"] == 29
    await brann.locator("input.amount").fill("50")
    await brann.locator("button.heal").click()
    await brann.locator(".hp-text", has_text="34 / 34 HP").wait_for()
    await brann.locator("select.add-condition").select_option("prone")
    await brann.locator("button.chip", has_text="Prone").wait_for()
    status, effects = await api("GET", "/effects", uuid=BRANN)
    assert [e["name"] for e in effects["data"]["effects"]] == ["Prone"], effects
    await brann.locator("button.chip", has_text="Prone").click()
    await brann.locator("button.chip", has_text="Prone").wait_for(state="detached")
    await page.fill("#w-chat-text", "Roll for initiative, everyone")
    await page.click("#w-chat button")
    await page.locator("#w-feed li", has_text="Roll for initiative, everyone").wait_for()
    status, chat = await api("GET", "/chat", limit=1)
    assert chat["data"]["messages"][0]["content"] == "Roll for initiative, everyone"
    assert await page.locator("#w-error").inner_text() == ""

    # another scene becomes active: the page follows the scene stream (name and picture)
    first_picture = await page.locator("#w-scene-img").get_attribute("src")
    status, _ = await api("POST", "/switch-scene", {"name": "Goblin Ambush"})
    assert status == 200
    await page.locator("#w-scene-name", has_text="Goblin Ambush").wait_for()
    await page.wait_for_function(
        "s => document.querySelector('#w-scene-img').getAttribute('src') !== s", arg=first_picture
    )
    # the tavern's wolf is not on this scene: its card goes
    await actor_row(page, "Wolf").wait_for(state="detached")

    # the goblin ambush: the heroes and both goblins, initiative rolled for all
    status, _ = await api("POST", "/end-encounter")
    assert status == 200
    await page.locator("#w-round", has_text="No encounter").wait_for()
    ambush = {"tokenUuids": [GOBLIN_1, GOBLIN_2], "startWithPlayers": True, "rollAll": True}
    status, started = await api("POST", "/start-encounter", ambush)
    assert status == 200, started
    status, encounters = await api("GET", "/encounters")
    order = encounters["encounters"][0]["combatants"]
    assert len(order) == 6
    tracker_rows = page.locator("#w-tracker li")
    await page.locator("#w-tracker li", has_text="Goblin 2").wait_for()
    assert await tracker_rows.count() == 6
    for row, combatant in zip(await tracker_rows.all(), order, strict=True):
        init = await row.locator(".init").inner_text()
        assert init == str(combatant["initiative"]) and init != "–"
    # each goblin's initiative roll in the feed says which goblin it was
    await page.locator("#w-feed .speaker", has_text="Goblin 2").wait_for()
    assert await page.locator("#w-feed .speaker", has_text="Goblin 1").count() == 1
    goblin_1, goblin_2 = actor_row(page, "Goblin 1"), actor_row(page, "Goblin 2")
    await goblin_1.locator(".hp-text", has_text="7 / 7 HP").wait_for()
    await goblin_2.locator(".hp-text", has_text="7 / 7 HP").wait_for()
    assert await actor_row(page, "Goblin").count() == 2  # no third card: the Goblin actor's

    # a client drops Goblin 2 to 0 over REST (its token's actor, as the encounter names it)
    goblin_2_actor = next(c["actorUuid"] for c in order if c["tokenUuid"] == GOBLIN_2)
    assert goblin_2_actor == f"{GOBLIN_2}.Actor.goblinNpc0000001"
    status, _ = await api("POST", "/decrease", {"attribute": HP, "amount": 7}, uuid=goblin_2_actor)
    assert status == 200
    await goblin_2.locator(".hp-text", has_text="0 / 7 HP").wait_for()
    await goblin_2.locator(".chip", has_text="Defeated").wait_for()
    dead = page.locator("#w-tracker li.defeated")
    await dead.wait_for()
    assert "Goblin 2" in await dead.inner_text() and "defeated" in await dead.inner_text()
    assert await goblin_1.locator(".hp-text").inner_text() == "7 / 7 HP"
    assert await goblin_1.locator(".chip", has_text="Defeated").count() == 0
    alive = page.locator("#w-tracker li", has_text="Goblin 1")
    assert "7/7 HP" in await alive.inner_text() and "defeated" not in await alive.inner_text()

    # the GM hurts Goblin 1 from the page: its token's HP, not the Goblin actor's
    status, got = await api("GET", "/get", uuid=GOBLIN)
    base_hp = got["data"]["system"]["attributes"]["hp"]["value"]
    await goblin_1.locator("input.amount").fill("3")
    await goblin_1.locator("button.damage").click()
    await goblin_1.locator(".hp-text", has_text="4 / 7 HP").wait_for()
    status, got = await api("GET", "/get", uuid=f"{GOBLIN_1}.Actor.goblinNpc0000001")
    assert status == 200 and got["data"]["system"]["attributes"]["hp"]["value"] == 4
    status, got = await api("GET", "/get", uuid=GOBLIN)
    assert got["data"]["system"]["attributes"]["hp"]["value"] == base_hp
    assert await goblin_2.locator(".hp-text").inner_text() == "0 / 7 HP"
    # and knocks it prone: its token's condition, not the Goblin actor's nor Goblin 2's
    await goblin_1.locator("select.add-condition").select_option("prone")
    await goblin_1.locator("button.chip", has_text="Prone").wait_for()
    status, effects = await api("GET", "/effects", uuid=f"{GOBLIN_1}.Actor.goblinNpc0000001")
    assert status == 200 and [e["name"] for e in effects["data"]["effects"]] == ["Prone"]
    status, effects = await api("GET", "/effects", uuid=GOBLIN)
    assert "Prone" not in [e["name"] for e in effects["data"]["effects"]]
    assert await goblin_2.locator("button.chip", has_text="Prone").count() == 0
    assert await page.locator("#w-error").inner_text() == ""

    # the screenshots: the ambush scene, the encounter running
    shots = Path(os.environ.get("VTTRELAY_SCREENSHOTS") or relay.config.data_dir)
    shots.mkdir(parents=True, exist_ok=True)
    await page.locator("#w-scene-img").wait_for()
    await page.evaluate("document.getElementById('w-feed').scrollTop = 1e6")
    await page.screenshot(path=str(shots / "world-desktop.png"), full_page=True)
    await page.set_viewport_size(PHONE)
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # on a phone, during a fight, the tracker comes before the actors
    top = "id => document.getElementById(id).getBoundingClientRect().top"
    assert await page.evaluate(top, "w-tracker") < await page.evaluate(top, "w-actors")
    await page.screenshot(path=str(shots / "world-phone.png"), full_page=True)
    await page.set_viewport_size(DESKTOP)

    # Live events says whose actor event it is by name, not by uuid
    await page.click("nav >> text=Live events")
    await page.select_option("#ev-world", CLIENT_ID)
    await page.check("input[name=stream][value=actor-events]")
    await page.click("#ev-start")
    await page.locator("#ev-status", has_text="Watching").wait_for()
    await eventually(lambda: world.world.subscriptions.get("actor-events", 0) >= 1)
    status, _ = await api("POST", "/decrease", {"attribute": HP, "amount": 1}, uuid=ELARA)
    assert status == 200
    await page.locator("#ev-list li", has_text="Elara Quill: HP 12").wait_for()
    assert await page.locator("#ev-list li", has_text="Actor.").count() == 0
    await page.click("#ev-start")  # stop watching

    # a 403 a moment ago, found among the failures; the page's calls are recorded as the
    # session's ("dashboard (signed in)"), like any API call
    limited = api_for(relay, ("world:info",))
    status, _ = await limited("GET", "/chat", clientId=CLIENT_ID)
    assert status == 403
    await page.click("nav >> text=Activity")
    rows = page.locator("table.activity tbody tr")
    assert await rows.filter(has_text="POST /next-turn").count() == 1
    assert "dashboard (signed in)" in await rows.filter(has_text="POST /next-turn").inner_text()
    await page.check("#failures-only")
    await page.click("#apply-filter")
    await page.wait_for_url("**failures=1**")
    failed = rows.filter(has_text="GET /chat")
    assert await failed.count() == 1
    assert await failed.get_attribute("data-status") == "403"
