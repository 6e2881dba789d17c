"""A CI suite's tests against vttrelay: its pytest plugin hands each test a relay with the demo
world, fresh for every test and seeded (these run with --vttrelay-seed 7: the same rolls every
time, so replies can be compared whole)."""

import httpx

from vttrelay.testing import VttRelay

GOBLIN = "Scene.sceneAmbush00001.Token.ambGoblin0000001"


def test_brann_attacks_the_goblin(vttrelay: VttRelay) -> None:
    with vttrelay.client() as relay:
        relay.scenes.switch(name="Goblin Ambush")
        used = relay.dnd5e.use_item(
            "Actor.brannFighter0001",
            ability_name="Longsword",
            target_uuid=GOBLIN,
            apply_damage=True,
        )
    outcome = used["data"]["outcome"]
    print(outcome["notes"], outcome["target"]["hp"])
    assert outcome["attack"]["hit"] and outcome["target"]["hp"] == "1/7"  # seed 7, every run


def test_every_test_starts_from_the_fresh_world(vttrelay: VttRelay) -> None:
    with vttrelay.client() as relay:
        goblin = relay.entities.get(uuid=GOBLIN + ".Actor.goblinNpc0000001")
    hp = goblin["data"]["system"]["attributes"]["hp"]
    assert hp["value"] == 7  # the damage of the test before is gone


def test_a_reply_is_the_same_bytes_every_run(vttrelay: VttRelay) -> None:
    reply = httpx.post(
        f"{vttrelay.url}/roll", json={"formula": "1d20 + 5"}, headers=vttrelay.headers
    )
    assert reply.text == (  # a snapshot: request id, roll id, dice and timestamp (seed 7)
        '{"type":"roll-result","requestId":"roll_1_s7","success":true,"data":{"id":'
        '"manual_1767225600000_ye1t3kw73f8","chatMessageCreated":false,"roll":{"formula":'
        '"1d20 + 5","total":16,"isCritical":false,"isFumble":false,"dice":[{"faces":20,'
        '"results":[{"result":11,"active":true}]}],"timestamp":1767225600000}}}'
    )
