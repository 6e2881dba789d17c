"""Uuid resolution, seeding of the demo world, settings."""

from __future__ import annotations

from pathlib import Path

import orjson

from vttrelay.world.actions.table import standard_table
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World
from vttrelay.world.store.seed import CONTENT_DIR, ITEM_KEYS, load_actor_content, reset


def test_world_content_matches_the_contract(world: World) -> None:
    meta = world.metadata()
    assert meta["world"] == {"id": "vttrelay-demo", "title": "vttrelay Demo World"}
    assert meta["system"] == {
        "id": "dnd5e",
        "title": "Dungeons & Dragons Fifth Edition",
        "version": "5.0.4",
    }
    assert meta["foundryVersion"] == documents.CORE_VERSION
    assert meta["system"]["version"] == documents.SYSTEM_VERSION
    assert {
        "id": "foundry-rest-api",
        "title": "Foundry REST API",
        "version": "3.4.1",
        "active": True,
    } in meta["modules"]
    assert world.connection_query()["id"] == "vttrelay-demo"
    with world.store.transaction() as tx:
        users = {u["_id"]: (u["name"], u["role"]) for u in tx.all("User")}
        assert users == {
            "gmUser0000000001": ("Gamemaster", 4),
            "playerAria000001": ("Aria", 1),
            "playerBen0000001": ("Ben", 1),
        }
        scene = documents.active_scene(tx)
        assert scene is not None and scene["_id"] == "sceneTavern00001"
        assert len(scene["tokens"]) == 7
        for token in scene["tokens"]:
            assert token["actorLink"] is not token["actorId"].endswith(
                ("Npc0000001", "Npc000000001")
            )
        assert documents.get_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS) is False


def test_seeded_actors_have_item_entries_with_the_11_keys(tmp_path: Path) -> None:
    expected = {a["_id"] for a in load_actor_content(CONTENT_DIR)}
    world = World.open(tmp_path / "fresh", actions=standard_table())
    with world.store.transaction() as tx:
        actors = tx.all("Actor")
    world.close()
    assert {a["_id"] for a in actors} == expected
    for actor in actors:
        for item in actor["items"]:
            assert set(item) == set(ITEM_KEYS), (actor["name"], item.get("name"))


def test_resolve_uuid(world: World) -> None:
    with world.store.transaction() as tx:
        actor = {
            "_id": "tmpActor00000001",
            "name": "Tmp",
            "items": [
                {
                    "_id": "itm0000000000001",
                    "name": "Dart",
                    "effects": [{"_id": "eff0000000000001", "name": "Glow"}],
                }
            ],
            "effects": [{"_id": "eff0000000000002", "name": "Concentrating"}],
        }
        tx.put("Actor", actor)
        scene = documents.active_scene(tx)
        assert scene is not None
        scene["tokens"].append(
            {"_id": "tokTmp0000000001", "name": "Tmp", "actorId": "tmpActor00000001"}
        )
        tx.put("Scene", scene)

        r = documents.resolve_uuid(tx, "Actor.tmpActor00000001")
        assert r and r.kind == "Actor" and r.doc["name"] == "Tmp"
        r = documents.resolve_uuid(tx, "Actor.tmpActor00000001.Item.itm0000000000001")
        assert r and r.kind == "Item" and r.doc["name"] == "Dart" and r.actor
        r.doc["name"] = "Sharp Dart"  # in-place change of the root's copy, then put it back
        tx.put(r.root_collection, r.root)
        stored = tx.get("Actor", "tmpActor00000001")
        assert stored and stored["items"][0]["name"] == "Sharp Dart"
        r = documents.resolve_uuid(
            tx, "Actor.tmpActor00000001.Item.itm0000000000001.ActiveEffect.eff0000000000001"
        )
        assert r and r.kind == "ActiveEffect" and r.doc["name"] == "Glow"
        r = documents.resolve_uuid(tx, "Actor.tmpActor00000001.ActiveEffect.eff0000000000002")
        assert r and r.kind == "ActiveEffect"
        r = documents.resolve_uuid(tx, "Scene.sceneTavern00001.Token.tokTmp0000000001")
        assert r and r.kind == "Token" and r.actor and r.actor["name"] == "Tmp"
        r = documents.resolve_uuid(
            tx, "Scene.sceneTavern00001.Token.tokTmp0000000001.Actor.tmpActor00000001"
        )
        assert r and r.kind == "Actor" and r.doc["_id"] == "tmpActor00000001"
        for bad in (
            "",
            "Actor",
            "Actor.",
            "Actor.nope",
            "Item.x",
            "Actor.tmpActor00000001.Item.x",
            "Scene.sceneTavern00001.Token.tokTmp0000000001.Actor.other",
            None,
            5,
        ):
            assert documents.resolve_uuid(tx, bad) is None, bad


def test_reset_restores_the_demo_world(tmp_path: Path) -> None:
    world = World.open(tmp_path / "d", actions=standard_table())
    with world.store.transaction() as tx:
        tx.put("ChatMessage", {"_id": "m", "content": "x"})
        documents.set_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, True)
    reset(world.store)
    with world.store.transaction() as tx:
        assert tx.all("ChatMessage") == []
        assert documents.get_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS) is False
        assert len(tx.all("User")) == 3
        assert len([d for d in tx.all("Setting") if d["key"] == documents.SETTING_WORLD]) == 1
    world.close()
    raw = orjson.loads((CONTENT_DIR / "world.json").read_bytes())
    assert raw["world"]["id"] == "vttrelay-demo"


def test_resolve_uuid_follows_every_embedded_collection(world: World) -> None:
    """Each (parent type, embedded type) of the EMBEDDED table resolves, saves and removes."""
    with world.store.transaction() as tx:
        for parent_kind, children in documents.EMBEDDED.items():
            for child_kind, key in children.items():
                child = {"_id": f"{child_kind[:8]}Child", "name": f"a {child_kind}"}
                parent = {"_id": f"{parent_kind[:8]}Parent", "name": parent_kind, key: [child]}
                if parent_kind in store_collections():
                    tx.put(parent_kind, parent)
                    uuid = f"{parent_kind}.{parent['_id']}.{child_kind}.{child['_id']}"
                else:  # Region lives in a Scene, Item also in an Actor
                    holder = "Scene" if parent_kind == "Region" else "Actor"
                    holder_key = documents.EMBEDDED[holder][parent_kind]
                    tx.put(holder, {"_id": "holder", "name": holder, holder_key: [parent]})
                    uuid = f"{holder}.holder.{parent_kind}.{parent['_id']}"
                    uuid += f".{child_kind}.{child['_id']}"
                res = documents.resolve_uuid(tx, uuid)
                assert res is not None, uuid
                assert (res.kind, res.doc["name"], res.key) == (child_kind, child["name"], key)
                assert res.embedded and res.parent is not None and res.uuid == uuid
                res.doc["name"] = "renamed"
                documents.save(tx, res)
                again = documents.resolve_uuid(tx, uuid)
                assert again is not None and again.doc["name"] == "renamed"
                documents.remove(tx, again)
                assert documents.resolve_uuid(tx, uuid) is None, uuid
        assert documents.resolve_uuid(tx, "Actor.holder.Token.x") is None  # not a step of Actor
        assert documents.resolve_uuid(tx, "Nope.x") is None


def test_resolve_uuid_top_level_types_and_compendium_uuids(world: World) -> None:
    with world.store.transaction() as tx:
        for kind in store_collections():
            tx.put(kind, {"_id": f"top{kind[:10]}", "name": kind})
            res = documents.resolve_uuid(tx, f"{kind}.top{kind[:10]}")
            assert res is not None and res.kind == kind and not res.embedded
            documents.remove(tx, res)
            assert tx.get(kind, f"top{kind[:10]}") is None

    class Source:  # a Documents whose compendium answers are recorded (nothing else is read)
        seen: list[str] = []

        def compendium(self, uuid: str) -> documents.Resolved | None:
            self.seen.append(uuid)
            return None

    source = Source()
    assert documents.resolve_uuid(source, "Compendium.a.b.Item.x") is None  # type: ignore[arg-type]
    assert source.seen == ["Compendium.a.b.Item.x"]


def store_collections() -> tuple[str, ...]:
    from vttrelay.world.model.collections import COLLECTIONS

    return COLLECTIONS
