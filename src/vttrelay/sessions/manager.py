"""The session manager: what the relay's session routes call (files-sheet-sessions §4, DESIGN
§7a). Answers are `(status, body)` pairs with the reference's texts; the relay only writes them.

- `handshake(account, url, username, world)`: a handshake of `handshake.Handshakes` for the
  caller's account (a Foundry URL whose host is not in `headless_allow` is refused: the relay's
  browser goes only where the operator allows).
- `start(account, body)`: with `worldName` and no handshake, the caller's stored embedded world of
  that name (`catalog`) is started as a child process (`vttrelay world run` with a connection
  token minted for it) and waited for until it is connected; with `handshakeToken` and
  `encryptedPassword`, the reference's checks, then a browser logs into the Foundry server as
  the user (`headless`) and the world's module connects with a token minted for its client id
  (the paired world the handshake's `x-world-name`, or `worldName`, names; with neither, the
  account's only paired world).
- `auto_start(account, client_id, timeout)`: a call named an offline world: a stored embedded
  world (`auto_start_worlds`) is started, and so is a paired Foundry world whose owner turned
  auto-start on (a browser session with the credential linked to it, files-sheet-sessions
  §4.10); one start per world at a time, none for two minutes after one failed (`launches`).
- `listing(account, last_request)`, `end(account, id)`: the caller's own sessions only.
- `world_left(client_id)`: the relay saw that world disconnect (the composition root hands it
  the world directory's `world_disconnected`): its sessions end at once, as the reference's do
  (files-sheet-sessions §4.7), unless the id is live again (a reconnect that replaced the
  socket is no leaving); unlisted and their slots free at once, browser or process stopped and
  connection token revoked just after.
- `sweep(last_request)`: ends sessions idle past `idle_timeout` (from the last request the relay
  forwarded to the world, or the start), those whose process died and those whose world is no
  longer connected (the backstop of `world_left`; also done before another start of that world).
Every session's processes are stopped on `close()`; `open()` reaps what a killed relay left.
Waits for a world to connect poll on `clock` with `sleep` (unit tests pass a fake clock's).
With sessions turned off the relay has no manager and answers as the reference does disabled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final

from vttrelay.sessions.catalog import (
    NAME_PATTERN,
    CatalogError,
    StoredWorld,
    WorldCatalog,
    account_key,
)
from vttrelay.sessions.handshake import HandshakeError, Handshakes, decrypt_password
from vttrelay.sessions.headless import LaunchError, WorldChoice, log_in, open_browser
from vttrelay.sessions.launches import Launches
from vttrelay.sessions.model import (
    Answer,
    ArmedWorld,
    PairedWorld,
    RelayHooks,
    Session,
    SessionConfig,
    StoredLogin,
    host_allowed,
)
from vttrelay.sessions.processes import ProcessRegistry

log = logging.getLogger(__name__)

LAUNCH_FAILED: Final = (
    "Failed to start headless session. This may happen if another GM is already connected."
)
FOREIGN_HOST: Final = (
    "This relay does not open sessions on that Foundry server (the operator's --headless-allow "
    "list)"
)
ENDED: Final = {"message": "Session ended", "status": "ok"}


def _now_ms() -> int:
    return int(time.time() * 1000)


class SessionManager:
    def __init__(
        self,
        config: SessionConfig,
        hooks: RelayHooks,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.clock = clock  # monotonic seconds: start deadlines, auto-start cooldowns
        self.sleep = sleep  # between polls of whether a starting world has connected
        self.hooks = hooks
        base = Path(config.data_dir) / "sessions"
        self.processes = ProcessRegistry(base / "run")
        self.catalog = WorldCatalog(base / "worlds")
        self.logs = base / "logs"
        self.handshakes = Handshakes()
        self.sessions: dict[str, Session] = {}
        self._starting: set[str] = set()  # client ids being started
        self._ending: set[asyncio.Task[None]] = set()  # sessions ended by `world_left`, stopping
        self.launches = Launches(
            clock=clock
        )  # auto-starts: joined while under way, cooled down if failed

    async def open(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(self.processes.reap)

    async def close(self) -> None:
        await self.launches.close()
        for session in list(self.sessions.values()):
            await self._stop(session)
        await asyncio.gather(*list(self._ending), return_exceptions=True)

    # Handshake and start ----------------------------------------------------------------------

    async def handshake(
        self, account: str, url: str, username: str, world: str, instance_id: str
    ) -> Answer:
        if not url or not username:
            return 400, {"error": "x-foundry-url and x-username headers are required"}
        if not host_allowed(url, self.config.headless_allow):
            return 403, {"error": FOREIGN_HOST}
        if not self.handshakes.allow(account):
            return 429, {"error": "Too many session handshakes, please try again later"}
        made = await asyncio.to_thread(self.handshakes.create, account, url, username, world)
        return 200, made.answer(instance_id)

    async def start(self, account: str, body: Mapping[str, Any]) -> Answer:
        token, encrypted = body.get("handshakeToken"), body.get("encryptedPassword")
        name = body.get("worldName")
        if not token and not encrypted and isinstance(name, str) and name:
            return await self._start_embedded(account, name)
        credential = body.get("credentialId")
        if not token and not encrypted and isinstance(credential, str) and credential:
            return await self._start_stored(account, credential, name)
        if (
            not isinstance(token, str)
            or not token
            or not isinstance(encrypted, str)
            or not encrypted
        ):
            return 400, {"error": "handshakeToken and encryptedPassword are required"}
        try:
            handshake = self.handshakes.take(token, account)
            password = await asyncio.to_thread(decrypt_password, handshake, encrypted)
        except HandshakeError as exc:
            return exc.status, {"error": exc.text}
        world = name if isinstance(name, str) and name else handshake.world_name
        login = StoredLogin(handshake.foundry_url, handshake.username, password, world)
        return await self._start_foundry(account, login)

    async def _start_stored(self, account: str, credential_id: str, name: Any) -> Answer:
        """A browser session with a credential the account stored (`credentialId`): no
        handshake, no password sent; the world is `worldName`, else the credential's."""
        found = self.hooks.stored_login
        login = await found(account, credential_id) if found is not None else None
        if login is None:
            return 404, {"error": f"credential not found: {credential_id}"}
        if isinstance(login, str):
            return 400, {"error": f"decrypt credential: {login}"}
        if not host_allowed(login.foundry_url, self.config.headless_allow):
            return 403, {"error": FOREIGN_HOST}
        if isinstance(name, str) and name:
            login = StoredLogin(login.foundry_url, login.username, login.password, name)
        return await self._start_foundry(account, login)

    async def _start_foundry(self, account: str, login: StoredLogin) -> Answer:
        """A browser logs into the Foundry server as the user and waits for the world's module
        to connect with a connection token minted for it (the world must have been paired with
        this relay once: its client id is the token's)."""
        world = login.world
        found = self.hooks.find_client
        paired = await found(account, world) if found is not None else None
        if paired is None and not world:
            return 400, {
                "error": "x-world-name is required: name the paired world to open (this account "
                "has paired no world, or several)"
            }
        if paired is None:
            return 400, {
                "error": f"No world of this account named '{world}' has been paired with this "
                "relay: pair it once from a GM's browser, then name it in x-world-name"
            }
        await self._drop_stale(paired.client_id)
        if self.hooks.is_live(paired.client_id, account) or paired.client_id in self._starting:
            return 408, {"error": "the world is already connected", "message": LAUNCH_FAILED}
        full = self._full(account)
        if full is not None:
            return full
        limit = self.config.start_timeout
        return await self._open_foundry(
            account, login, paired, limit, f"client connection timed out after {limit:g}s"
        )

    async def _open_foundry(
        self, account: str, login: StoredLogin, paired: PairedWorld, limit: float, late: str
    ) -> Answer:
        """The browser session of a paired world: open the browser, log in (the world launched
        from Foundry's world list if need be), wait up to `limit` s for exactly its client id
        to connect (`late`: the error past it)."""
        client_id = paired.client_id
        world = login.world or paired.world_title or paired.world_id
        choice = WorldChoice((world, paired.world_id, paired.world_title), paired.world_id)
        self._starting.add(client_id)
        session_id = str(uuid.uuid4())
        stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        secret = await self.hooks.mint_token(account, client_id, f"headless session {stamp}")
        session = Session(
            session_id,
            account,
            client_id,
            "foundry",
            login.foundry_url,
            login.username,
            world,
            _now_ms(),
            secret,
        )
        try:
            session.browser = await open_browser(
                self.processes, session_id, self.logs / f"{session_id}.log"
            )
            session.child = session.browser.child
            await log_in(
                session.browser,
                login.foundry_url,
                login.username,
                login.password,
                secret,
                choice,
                self.logs / f"{session_id}.png",
            )
            deadline = self.clock() + limit
            while not self.hooks.is_live(client_id, account):
                if self.clock() > deadline:
                    raise LaunchError(late)
                await self.sleep(0.1)
        except LaunchError as exc:
            await self._stop(session)
            return 408, {"error": str(exc), "message": LAUNCH_FAILED}
        except BaseException:
            await self._stop(session)
            raise
        finally:
            self._starting.discard(client_id)
        session.started_at = _now_ms()
        self.sessions[session_id] = session
        log.info("session %s: %s logged into %s", session_id, client_id, login.foundry_url)
        return 200, {"clientId": client_id, "sessionId": session_id, "success": True}

    def _count(self, account: str) -> int:
        return sum(1 for s in self.sessions.values() if s.account == account)

    def _full(self, account: str) -> Answer | None:
        """The refusal when the account, or the relay, has its most sessions; else None."""
        limit = self.config.max_per_account
        if limit and self._count(account) >= limit:
            return 429, {"error": f"maximum headless sessions ({limit}) reached for this account"}
        total = self.config.max_total
        if total and len(self.sessions) + len(self._starting) >= total:
            return 429, {"error": f"maximum headless sessions ({total}) reached on this relay"}
        return None

    async def _start_embedded(self, account: str, name: str) -> Answer:
        world = self.catalog.get(account, name)
        if world is None:
            return 404, {"error": f"No world named '{name}': create it first"}
        await self._drop_stale(world.client_id)
        for session in self.sessions.values():
            if session.client_id == world.client_id:
                return 200, {
                    "clientId": session.client_id,
                    "existingSession": True,
                    "sessionId": session.id,
                    "success": True,
                }
        if world.client_id in self._starting:
            return 409, {"error": f"World '{name}' is being started"}
        full = self._full(account)
        if full is not None:
            return full
        self._starting.add(world.client_id)
        try:
            return await self._launch_world(account, world.name, world.client_id, world.folder)
        finally:
            self._starting.discard(world.client_id)

    def may_auto_start(self, account: str, client_id: str) -> bool:
        """Could `client_id` be one of the account's stored worlds? Decided from the id alone
        (`<name>-<6 hex of the account>`, catalog.py), with no disk access: the request core asks
        this before it lets a call through to an offline world."""
        if not self.config.auto_start_worlds:
            return False
        name, _, suffix = client_id.rpartition("-")
        return suffix == account_key(account)[:6] and NAME_PATTERN.fullmatch(name) is not None

    async def armed(self, account: str, client_id: str) -> ArmedWorld | None:
        """The account's paired Foundry world `client_id` if its owner turned auto-start on."""
        found = self.hooks.armed
        return await found(account, client_id) if found is not None else None

    async def auto_start(self, account: str, client_id: str, timeout: float) -> Answer | None:
        """Start the account's offline world `client_id` for a request that named it, and wait
        until it has connected: a stored embedded world (`serve --auto-start-worlds`, within
        `timeout` s) or a paired Foundry world armed for auto-start (a browser session with its
        linked credential; the reference's step limits, then `timeout` s for its module). A start
        under way is joined, one that failed is not retried for two minutes (`launches`). None
        when it is neither (the caller answers its usual offline error); else the start's
        answer (200 once live)."""
        if self.may_auto_start(account, client_id):
            name = client_id.rpartition("-")[0]
            world = await asyncio.to_thread(self.catalog.get, account, name)
            if world is None or world.client_id != client_id:
                return None
            stored = world
            return await self.launches.run(
                client_id, lambda: self._auto_start_embedded(stored, timeout), timeout
            )
        armed = await self.armed(account, client_id)
        if armed is None:
            return None
        return await self.launches.run(
            client_id,
            lambda: self._auto_start_foundry(account, armed, timeout),
            attempt=armed.credential_id or "",
        )

    async def _auto_start_embedded(self, world: StoredWorld, timeout: float) -> Answer:
        account, client_id = world.account, world.client_id
        await self._drop_stale(client_id)
        if self.hooks.is_live(client_id, account) or client_id in self._starting:
            return await self._outcome(account, client_id, timeout)
        full = self._full(account)
        if full is not None:
            return full
        log.info("auto-start of offline world %s for account %s", client_id, account)
        self._starting.add(client_id)
        try:
            return await self._launch_world(account, world.name, client_id, world.folder, timeout)
        finally:
            self._starting.discard(client_id)

    async def _auto_start_foundry(self, account: str, armed: ArmedWorld, timeout: float) -> Answer:
        """files-sheet-sessions §4.10 flow steps 4-6 with the reference's texts."""
        client_id = armed.paired.client_id
        await self._drop_stale(client_id)
        if self.hooks.is_live(client_id, account) or client_id in self._starting:
            return await self._outcome(account, client_id, timeout)
        if armed.credential_id is None:
            return 409, {
                "error": f"clientId {client_id} has auto-start enabled but no credential "
                "assigned; select one in Connections"
            }
        found = self.hooks.stored_login
        login = await found(account, armed.credential_id) if found is not None else None
        if login is None:
            return 409, {
                "error": "KnownClient.credentialId references missing or unauthorized "
                f"credential {armed.credential_id}"
            }
        if isinstance(login, str):
            return 400, {"error": f"decrypt credential: {login}"}
        if not host_allowed(login.foundry_url, self.config.headless_allow):
            return 403, {"error": FOREIGN_HOST}
        full = self._full(account)
        if full is not None:
            return full
        log.info("headless auto-start of offline world %s for account %s", client_id, account)
        late = f"seeded headless client did not register within {timeout:g}s"
        return await self._open_foundry(account, login, armed.paired, timeout, late)

    async def _outcome(self, account: str, client_id: str, timeout: float) -> Answer:
        """The world is live, or a /start-session is starting it: 200 once it is live, 408 if
        that start ends without it or takes past `timeout` s."""
        deadline = self.clock() + timeout
        while client_id in self._starting and self.clock() < deadline:
            await self.sleep(0.05)
        if self.hooks.is_live(client_id, account):
            return 200, {"clientId": client_id, "success": True}
        return 408, {"error": f"the world did not connect within {timeout:g} s"}

    async def _launch_world(
        self, account: str, name: str, client_id: str, folder: Path, timeout: float | None = None
    ) -> Answer:
        limit = self.config.start_timeout if timeout is None else timeout
        session_id = str(uuid.uuid4())
        secret = await self.hooks.mint_token(account, client_id, f"session {name}")
        argv = [
            self.config.python, "-m", "vttrelay", "world", "run",
            "--relay", self.hooks.relay_url, "--token", secret,
            "--client-id", client_id, "--data-dir", str(folder),
        ]  # fmt: skip
        session = Session(
            session_id, account, client_id, "embedded", "", "", name, _now_ms(), secret
        )
        session.child = await self.processes.spawn(
            session_id, argv, {}, self.logs / f"{session_id}.log"
        )
        deadline = self.clock() + limit
        while not self.hooks.is_live(client_id, account):
            if not session.child.running or self.clock() > deadline:
                reason = (
                    "the world process exited"
                    if not session.child.running
                    else f"the world did not connect within {limit:g} s"
                )
                await self._stop(session)
                return 408, {"error": reason, "message": LAUNCH_FAILED}
            await self.sleep(0.05)
        session.started_at = _now_ms()  # idle time counts from here (starting took a while)
        self.sessions[session_id] = session
        log.info("session %s: world %s of account %s started", session_id, client_id, account)
        return 200, {"clientId": client_id, "sessionId": session_id, "success": True}

    # Listing, ending, idling ------------------------------------------------------------------

    def listing(
        self, account: str, last_request: Callable[[str], float | None]
    ) -> list[dict[str, Any]]:
        out = []
        for session in self.sessions.values():
            if session.account == account:
                out.append(session.summary(self._last_activity(session, last_request)))
        return out

    @staticmethod
    def _last_activity(session: Session, last_request: Callable[[str], float | None]) -> int:
        seen = last_request(session.client_id)
        return max(session.started_at, int(seen * 1000) if seen else 0)

    async def end(self, account: str, session_id: str) -> Answer:
        session = self.sessions.get(session_id)
        if session is None or session.account != account:
            return 404, {"error": f"session not found: {session_id}"}
        await self._stop(session)
        return 200, ENDED

    async def _stop(self, session: Session) -> None:
        """Unlist `session` and stop what it runs (once: the sweep and `world_left` may both
        come for it)."""
        if session.ended:
            return
        session.ended = True
        self.sessions.pop(session.id, None)
        if session.browser is not None:
            await session.browser.close(self.processes)
        elif session.child is not None:
            await self.processes.stop(session.child)
        with contextlib.suppress(Exception):
            await self.hooks.revoke_token(session.token)
        log.info("session %s ended (%s)", session.id, session.client_id)

    async def sweep(self, last_request: Callable[[str], float | None]) -> None:
        """End sessions idle past `idle_timeout`, those whose process has died and those whose
        world is no longer connected."""
        idle = self.config.idle_timeout
        now = _now_ms()
        for session in list(self.sessions.values()):
            if session.id not in self.sessions:
                continue  # ended meanwhile (`world_left`)
            dead = session.child is not None and not session.child.running
            gone = not self.hooks.is_live(session.client_id, session.account)
            quiet = idle > 0 and now - self._last_activity(session, last_request) > idle * 1000
            if dead or gone or quiet:
                why = "exited" if dead else "its world left" if gone else "idle"
                log.info("session %s: %s, ending it", session.id, why)
                await self._stop(session)

    def world_left(self, client_id: str) -> None:
        """`client_id`'s world disconnected from the relay: end its sessions now, not at the
        next sweep. Each is unlisted (its slot free) before this returns; its browser or world
        process is stopped and its token revoked in a task (`close` waits for those). A world
        live again by now (a reconnect replaced its socket) keeps its session."""
        for session in [s for s in self.sessions.values() if s.client_id == client_id]:
            if self.hooks.is_live(client_id, session.account):
                continue
            log.info("session %s: its world left, ending it", session.id)
            self.sessions.pop(session.id, None)
            task = asyncio.ensure_future(self._stop_logged(session))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

    async def _stop_logged(self, session: Session) -> None:
        try:
            await self._stop(session)
        except Exception:
            log.exception("session %s: stopping it failed", session.id)

    async def _drop_stale(self, client_id: str) -> None:
        """End the sessions of `client_id` whose world is no longer connected (a browser whose
        world went away, say): before another start of that world (the reference's step 1)."""
        for session in [s for s in self.sessions.values() if s.client_id == client_id]:
            if session.id in self.sessions and not self.hooks.is_live(client_id, session.account):
                log.info("session %s: its world left, ending it", session.id)
                await self._stop(session)

    # Stored worlds ----------------------------------------------------------------------------

    async def create_world(self, account: str, name: Any) -> Answer:
        try:
            world = await asyncio.to_thread(self.catalog.create, account, name)
        except CatalogError as exc:
            return exc.status, {"error": exc.text}
        return 201, world.summary()

    def worlds(self, account: str) -> list[dict[str, Any]]:
        running = {s.client_id for s in self.sessions.values()}
        return [
            {**w.summary(), "running": w.client_id in running} for w in self.catalog.list(account)
        ]
