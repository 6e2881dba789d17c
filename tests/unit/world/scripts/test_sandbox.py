"""The script sandbox on its own (vttrelay.world.scripts.sandbox): results, async scripts,
errors, escape attempts, time and memory limits, and that the event loop keeps running while a
script does.

The world side is an in-process fake here (`FakeHost`); the real world is in test_action.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from vttrelay.world.errors import HostError, ScriptError
from vttrelay.world.scripts.sandbox import ScriptLimits, ScriptRunner

INIT: dict[str, Any] = {
    "world": {"id": "w1", "title": "World One"},
    "system": {"id": "dnd5e", "title": "D&D 5e", "version": "5.0.4"},
    "version": "14.363",
    "user": {"id": "gm", "name": "Gamemaster", "role": 4, "isGM": True},
    "users": [{"id": "gm", "name": "Gamemaster", "role": 4, "isGM": True}],
    "actors": [
        {
            "_id": "actor1",
            "name": "Elara Quill",
            "type": "character",
            "system": {"attributes": {"hp": {"value": 5, "max": 20}}},
            "items": [{"_id": "item1", "name": "Quarterstaff", "type": "weapon", "system": {}}],
            "effects": [],
        }
    ],
    "scenes": [
        {
            "_id": "scene1",
            "name": "Tavern",
            "active": True,
            "tokens": [{"_id": "tok1", "name": "Elara Quill", "actorId": "actor1"}],
        }
    ],
    "settings": {"foundry-rest-api.wsRelayUrl": "ws://relay.test"},
}


class FakeHost:
    """Answers world calls like the world does, records them and the thread they ran on."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.threads: set[int] = set()

    def __call__(self, op: str, args: dict[str, Any]) -> Any:
        self.calls.append((op, args))
        self.threads.add(threading.get_ident())
        if op == "actor.update":
            actor = dict(INIT["actors"][0])
            hp = args["changes"].get("system.attributes.hp.value", 5)
            actor["system"] = {"attributes": {"hp": {"value": hp, "max": 20}}}
            return actor
        if op == "chat.create":
            return {"id": "msg1", "content": args["data"].get("content")}
        raise HostError(f"refused: {op}")


@pytest.fixture
async def runner() -> AsyncIterator[ScriptRunner]:
    r = ScriptRunner(ScriptLimits(time_limit=1.0))
    yield r
    r.close()


async def run(runner: ScriptRunner, script: str, host: Any = None, **limits: Any) -> Any:
    result = await runner.run(
        script,
        init=INIT,
        host=host or FakeHost(),
        limits=ScriptLimits(**{"time_limit": 1.0, **limits}) if limits else None,
    )
    return result.value if result.defined else "<undefined>"


async def error_of(runner: ScriptRunner, script: str, **limits: Any) -> str:
    with pytest.raises(ScriptError) as info:
        await run(runner, script, **limits)
    return info.value.message


# Results -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("return 42", 42),
        ("return 2.5", 2.5),
        ("return 'text'", "text"),
        ("return true", True),
        ("return false", False),
        ("return null", None),
        ("return [1, 'a', null, [true]]", [1, "a", None, [True]]),
        ("return {a: {b: [1, 2]}, c: 'x'}", {"a": {"b": [1, 2]}, "c": "x"}),
        ("return NaN", None),
        ("return {f() {}, u: undefined, n: 1}", {"n": 1}),
        ("return new Date(0)", "1970-01-01T00:00:00.000Z"),
    ],
)
async def test_returned_json_values(runner: ScriptRunner, script: str, expected: Any) -> None:
    assert await run(runner, script) == expected


async def test_no_return_or_undefined_means_no_result(runner: ScriptRunner) -> None:
    assert await run(runner, "const x = 1;") == "<undefined>"
    assert await run(runner, "return undefined") == "<undefined>"
    assert await run(runner, "return () => 1") == "<undefined>"


async def test_async_scripts_await_and_promises(runner: ScriptRunner) -> None:
    assert await run(runner, "await null; return 1 + (await Promise.resolve(2))") == 3
    script = "return await new Promise(resolve => setTimeout(() => resolve('late'), 30))"
    assert await run(runner, script) == "late"
    script = "const xs = await Promise.all([1, 2, 3].map(async n => n * 2)); return xs"
    assert await run(runner, script) == [2, 4, 6]
    assert await run(runner, "return Promise.resolve({ok: true})") == {"ok": True}


async def test_thrown_errors_become_script_errors(runner: ScriptRunner) -> None:
    assert await error_of(runner, "throw new Error('boom')") == "boom"
    assert await error_of(runner, "throw new TypeError('bad type')") == "bad type"
    assert await error_of(runner, "throw 'plain string'") == "plain string"
    assert await error_of(runner, "await null; throw new RangeError('later')") == "later"
    assert await error_of(runner, "return Promise.reject(new Error('rejected'))") == "rejected"
    assert "is not defined" in await error_of(runner, "return notAVariable")
    assert await error_of(runner, "syntax error (") != ""
    assert "BigInt" in await error_of(runner, "return 10n") or "bigint" in (
        await error_of(runner, "return 10n")
    )
    message = await error_of(runner, "await new Promise(() => {})")
    assert message == "the script awaits a Promise that can never settle"


# The game API ------------------------------------------------------------------------------------


async def test_reads_come_from_the_snapshot(runner: ScriptRunner) -> None:
    script = """
      const a = game.actors.getName('elara quill');
      return {
        id: a.id, uuid: a.uuid, hp: a.system.attributes.hp.value,
        item: a.items.contents[0].uuid, count: game.actors.contents.length,
        filtered: game.actors.filter(x => x.type === 'character').map(x => x.name),
        byId: game.actors.get('actor1').name, none: game.actors.get('nope') ?? null,
        scene: game.scenes.active.name, token: game.scenes.active.tokens.contents[0].actor.name,
        world: game.world.title, system: game.system.version, user: game.user.name,
        users: game.users.contents.map(u => u.name),
        relay: game.settings.get('foundry-rest-api', 'wsRelayUrl'),
        fromUuid: (await fromUuid('Actor.actor1.Item.item1')).name,
      };
    """
    assert await run(runner, script) == {
        "id": "actor1",
        "uuid": "Actor.actor1",
        "hp": 5,
        "item": "Actor.actor1.Item.item1",
        "count": 1,
        "filtered": ["Elara Quill"],
        "byId": "Elara Quill",
        "none": None,
        "scene": "Tavern",
        "token": "Elara Quill",
        "world": "World One",
        "system": "5.0.4",
        "user": "Gamemaster",
        "users": ["Gamemaster"],
        "relay": "ws://relay.test",
        "fromUuid": "Quarterstaff",
    }
    message = await error_of(runner, "return game.settings.get('core', 'nothing')")
    assert message == '"core.nothing" is not a registered game setting'


async def test_writes_run_on_the_event_loop_thread_and_refresh_reads(
    runner: ScriptRunner,
) -> None:
    host = FakeHost()
    script = """
      const a = game.actors.get('actor1');
      const same = await a.update({'system.attributes.hp.value': 17});
      const msg = await ChatMessage.create({content: 'hello'});
      return [a.system.attributes.hp.value, same === a, msg.content];
    """
    assert await run(runner, script, host) == [17, True, "hello"]
    assert [op for op, _ in host.calls] == ["actor.update", "chat.create"]
    assert host.threads == {threading.get_ident()}


async def test_host_errors_reject_the_promise(runner: ScriptRunner) -> None:
    script = "try { await game.settings.set('core', 'x', 1) } catch (e) { return e.message }"
    assert await run(runner, script) == "refused: settings.set"
    assert await error_of(runner, "await game.settings.set('core', 'x', 1)") == (
        "refused: settings.set"
    )


async def test_unawaited_writes_still_happen(runner: ScriptRunner) -> None:
    host = FakeHost()
    assert await run(runner, "ChatMessage.create({content: 'bye'}); return 1", host) == 1
    assert host.calls == [("chat.create", {"data": {"content": "bye"}})]


async def test_a_host_bug_does_not_leak_internals(runner: ScriptRunner) -> None:
    def broken(op: str, args: dict[str, Any]) -> Any:
        raise KeyError("/secret/path/on/host")

    script = "try { await ChatMessage.create({content: 'x'}) } catch (e) { return e.message }"
    message = await run(runner, script, broken)
    assert message == "world call chat.create failed: KeyError"


# Escape attempts ---------------------------------------------------------------------------------

STANDARD_GLOBALS = {
    # ECMAScript built-ins of the engine
    *[
        "Object",
        "Function",
        "Error",
        "EvalError",
        "RangeError",
        "ReferenceError",
        "SyntaxError",
        "TypeError",
        "URIError",
        "InternalError",
        "AggregateError",
        "Array",
        "parseInt",
        "parseFloat",
        "isNaN",
        "isFinite",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "unescape",
        "Infinity",
        "NaN",
        "undefined",
        "__date_clock",
        "Number",
        "Boolean",
        "String",
        "Math",
        "Reflect",
        "Symbol",
        "eval",
        "globalThis",
        "Date",
        "RegExp",
        "JSON",
        "Proxy",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "ArrayBuffer",
        "SharedArrayBuffer",
        "Uint8ClampedArray",
        "Int8Array",
        "Uint8Array",
        "Int16Array",
        "Uint16Array",
        "Int32Array",
        "Uint32Array",
        "BigInt64Array",
        "BigUint64Array",
        "Float32Array",
        "Float64Array",
        "DataView",
        "Atomics",
        "Promise",
        "BigInt",
        "WeakRef",
        "FinalizationRegistry",
        "Iterator",
    ],
    # the world API of prelude.js
    *[
        "game",
        "ChatMessage",
        "Actor",
        "Item",
        "fromUuid",
        "fromUuidSync",
        "foundry",
        "setTimeout",
        "clearTimeout",
        "console",
    ],
}


async def test_the_global_scope_holds_only_javascript_and_the_world_api(
    runner: ScriptRunner,
) -> None:
    names = await run(runner, "return Object.getOwnPropertyNames(globalThis)")
    assert set(names) <= STANDARD_GLOBALS
    script = "return typeof __date_clock === 'function' ? typeof __date_clock() : 'none'"
    assert await run(runner, script) in ("number", "none")


@pytest.mark.parametrize(
    "script",
    [
        "return require('fs').readFileSync('/etc/passwd', 'utf8')",
        "return process.env.HOME",
        "return process.exit(1)",
        "return await fetch('http://127.0.0.1:1/')",
        "return new XMLHttpRequest()",
        "return std.loadFile('/etc/passwd')",
        "return os.exec(['ls'])",
        "return Deno.env",
        "return Bun.file('/etc/passwd')",
        "return __import__('os')",
    ],
)
async def test_no_host_objects(runner: ScriptRunner, script: str) -> None:
    assert "is not defined" in await error_of(runner, script)


@pytest.mark.parametrize("module", ["os", "std", "fs", "/etc/passwd", "node:child_process"])
async def test_dynamic_import_loads_nothing(runner: ScriptRunner, module: str) -> None:
    message = await error_of(runner, f"return Object.keys(await import({module!r}))")
    assert "could not load module" in message


async def test_function_constructor_tricks_stay_inside(runner: ScriptRunner) -> None:
    scripts = [
        "return (function(){}).constructor('return typeof process')()",
        "return [].constructor.constructor('return typeof require')()",
        "return (async function(){}).constructor('return typeof fetch')().then(x => x)",
        "return eval('typeof process')",
        "return new Function('return this')() === globalThis ? 'sandbox' : 'other'",
        "return Reflect.construct(Function, ['return typeof std'])()",
        "return game.actors.constructor.constructor('return typeof os')()",
        "return ChatMessage.create.constructor('return typeof process')()",
    ]
    for script in scripts:
        result = await run(runner, script)
        assert result in ("undefined", "sandbox"), script


async def test_the_bridge_cannot_be_reached_or_forged(runner: ScriptRunner) -> None:
    for name in ("control", "worldCall", "waiting", "queue", "__vttrelay_host", "host"):
        assert await run(runner, f"return typeof {name}") == "undefined"
    # prototype pollution of everything the bridge touches, then a write
    host = FakeHost()
    script = """
      Object.prototype.op = 'evil';
      Object.prototype.__proto__polluted = true;
      Object.prototype.toJSON = function () { return {op: 'evil', args: {}}; };
      Array.prototype.push = () => { throw new Error('push hijacked'); };
      JSON.stringify = () => '{"op":"evil"}';
      JSON.parse = () => ({cmd: 'evil'});
      Promise.prototype.then = function () { throw new Error('then hijacked'); };
      Map.prototype.get = () => undefined;
      return 1;
    """
    assert await run(runner, script, host) == 1  # the bridge holds its own intrinsics
    assert host.calls == []  # nothing reached the world
    script += "; await game.actors.get('actor1').update({'system.attributes.hp.value': 3})"
    script = script.replace("return 1;", "")
    with pytest.raises(ScriptError):
        await run(runner, script, host)  # toJSON pollution mangles the call: refused
    assert {op for op, _ in host.calls} <= {"actor.update"}
    # pollution of Object.prototype only: writes still carry exactly what the world validates
    host = FakeHost()
    script = """
      Object.defineProperty(Object.prototype, 'op', {get() { return 'evil' }, configurable: true});
      Object.prototype.id = 'forged';
      await game.actors.get('actor1').update({'system.attributes.hp.value': 3});
      return 'done';
    """
    assert await run(runner, script, host) == "done"
    assert [op for op, _ in host.calls] == ["actor.update"]
    assert host.calls[0][1]["id"] == "actor1"


# Limits ------------------------------------------------------------------------------------------


async def test_time_limit_stops_busy_loops_and_the_process_is_fine(runner: ScriptRunner) -> None:
    for script in [
        "while (true) {}",
        "await null; while (true) {}",
        "await ChatMessage.create({content: 'x'}); for (;;) {}",
        "try { while (true) {} } catch (e) { while (true) {} }",
        "setTimeout(() => { while (true) {} }, 0); await new Promise(r => setTimeout(r, 50))",
        "await new Promise(r => setTimeout(r, 60000))",
    ]:
        started = time.monotonic()
        message = await error_of(runner, script, time_limit=0.3)
        elapsed = time.monotonic() - started
        assert message == "the script exceeded its time limit of 0.3 s", script
        assert elapsed < 0.3 + 2.5, script  # a fresh child process starts in ~0.3 s
    assert await run(runner, "return 'still fine'") == "still fine"


async def test_memory_limit_stops_huge_allocations(runner: ScriptRunner) -> None:
    expected = "out of memory (the script's memory limit is 16 MiB)"
    for script in [
        "const a = []; while (true) a.push(new Array(100000).fill(1.5));",
        "let s = 'x'; for (let i = 0; i < 40; i++) s += s; return s.length",
        "await null; const a = []; while (true) a.push({x: new Array(1000).fill('y')});",
    ]:
        # the longest time limit a world allows: a loaded machine still reaches the memory
        # limit (well under 0.1 s on a quiet one), not the clock
        message = await error_of(runner, script, memory_limit=16 * 1024 * 1024, time_limit=15.0)
        assert message == expected, script
    message = await error_of(runner, "return new ArrayBuffer(2 ** 31).byteLength")
    assert "array buffer" in message or "memory" in message
    assert await run(runner, "return new Array(1000).fill(1).length") == 1000


async def test_an_error_that_cannot_be_read_says_why(runner: ScriptRunner) -> None:
    """Reading the thrown value failed (at the memory limit: the engine's own "out of memory"
    error): the answer is that failure's message, not an opaque "unknown error"."""
    script = "throw {toString() { throw new Error('cannot be read') }}"
    assert await error_of(runner, script) == "cannot be read"
    assert await error_of(runner, "throw {toString() { throw 5 }}") == "unknown error"


async def test_deep_recursion_is_an_error_not_a_crash(runner: ScriptRunner) -> None:
    message = await error_of(runner, "function f(n) { return f(n + 1) + 1 } return f(0)")
    assert message == "stack overflow"
    # Slow to overflow (~0.8 s on a quiet machine): give it the longest time limit a world
    # allows, so a loaded machine still reaches the overflow, not the clock.
    script = "const o = {}; o.toJSON = () => [o, o]; return o"
    message = await error_of(runner, script, time_limit=15.0)
    assert "stack overflow" in message or "circular" in message
    assert await run(runner, "function g(n) { return n ? g(n - 1) + 1 : 0 } return g(2000)") == 2000


async def test_world_call_cap(runner: ScriptRunner) -> None:
    limited = ScriptRunner(ScriptLimits(time_limit=2.0, max_host_calls=5))
    try:
        with pytest.raises(ScriptError, match="more than 5 world calls"):
            await limited.run(
                "for (let i = 0; i < 10; i++) await ChatMessage.create({content: 'x'})",
                init=INIT,
                host=FakeHost(),
            )
    finally:
        limited.close()


# Concurrency -------------------------------------------------------------------------------------


async def test_a_busy_script_does_not_block_the_event_loop(runner: ScriptRunner) -> None:
    gaps: list[float] = []

    async def ticker(stop: asyncio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    stop = asyncio.Event()
    tick = asyncio.create_task(ticker(stop))
    busy = asyncio.create_task(
        run(runner, "const end = Date.now() + 700; while (Date.now() < end) {} return 'ok'")
    )
    quick = await run(runner, "return 'quick'")  # another script runs meanwhile
    assert quick == "quick"
    assert not busy.done()
    assert await busy == "ok"
    stop.set()
    await tick
    assert len(gaps) > 30
    assert max(gaps) < 0.25


async def test_cancelling_the_caller_stops_the_script(runner: ScriptRunner) -> None:
    task = asyncio.create_task(run(runner, "await new Promise(r => setTimeout(r, 800)); return 1"))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await run(runner, "return 2") == 2


async def test_an_engine_crash_costs_only_the_child(runner: ScriptRunner) -> None:
    # This allocation pattern segfaults the quickjs extension at a 16 MiB limit (see scripts.py).
    script = "let a = []; while (true) a.push(new Array(1000).fill(1));"
    message = await error_of(runner, script, memory_limit=16 * 1024 * 1024)
    assert message == "out of memory (the script's memory limit is 16 MiB)" or message.startswith(
        "the script engine stopped unexpectedly"
    )
    assert await run(runner, "return 'the world is fine'") == "the world is fine"


async def test_proto_pollution_stays_inside_the_script(runner: ScriptRunner) -> None:
    host = FakeHost()
    script = """
      ({}).__proto__.then = function (resolve) { resolve('forged'); };   // every object thenable
      game.actors.__proto__.get = () => 'hijacked';                      // Collection.prototype
      try { Object.prototype.__proto__ = Array.prototype } catch (e) { /* immutable */ }
      const hijacked = [game.actors.get('actor1'), game.scenes.get('scene1')];
      delete Object.prototype.then;
      return hijacked;
    """
    assert await run(runner, script, host) == ["hijacked", "hijacked"]
    assert host.calls == []
    script = """
      Object.prototype.then = function (resolve) { resolve('forged'); };
      const msg = ChatMessage.create({content: 'x'});
      delete Object.prototype.then;
      return typeof (await msg);
    """
    await run(runner, script, host)  # whatever the script believes, the world saw one valid call
    assert host.calls == [("chat.create", {"data": {"content": "x"}})]


async def test_a_flood_of_world_calls_does_not_starve_the_loop(runner: ScriptRunner) -> None:
    def slow_host(op: str, args: dict[str, Any]) -> Any:
        time.sleep(0.002)  # like a small transaction
        return {"id": "m"}

    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    script = "for (let i = 0; i < 300; i++) ChatMessage.create({content: 'x' + i}); return 'sent'"
    assert await run(runner, script, slow_host, time_limit=5.0) == "sent"
    stop.set()
    await tick
    assert max(gaps) < 0.1
    message = await error_of(
        runner, "for (let i = 0; i < 1001; i++) ChatMessage.create({content: 'x'})", time_limit=5.0
    )
    assert message == "the script made more than 1000 world calls"


async def test_without_the_engine_installed_the_error_says_so(
    runner: ScriptRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "quickjs" else real(name, *a)
    )
    assert await error_of(runner, "return 1") == (
        "the JavaScript engine is not installed (pip install quickjs)"
    )


def test_the_child_gets_none_of_the_parent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from vttrelay.world.scripts.sandbox import _child_env

    monkeypatch.setenv("VTTRELAY_TEST_SECRET", "hunter2")
    env = _child_env()
    assert "VTTRELAY_TEST_SECRET" not in env
    assert set(env) == {"PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE", "LC_ALL"}
