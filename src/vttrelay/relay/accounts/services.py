"""The account services one relay holds (settings, password hasher, credential vault, the
worlds' user lists, the cross-world request and module event logs, mails in flight), kept in
the aiohttp application under `ACCOUNTS` (`install`), read by the /auth handlers with
`services(request)`."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from aiohttp import web

from vttrelay.relay.accounts import users
from vttrelay.relay.accounts.credentials import Vault
from vttrelay.relay.accounts.module_events import ModuleEventLog
from vttrelay.relay.accounts.passwords import Passwords
from vttrelay.relay.accounts.remote_logs import RemoteRequestLog
from vttrelay.relay.accounts.rules import bare_email
from vttrelay.relay.accounts.settings import AccountSettings
from vttrelay.relay.accounts.users import User
from vttrelay.relay.accounts.world_users import UsersRecorder
from vttrelay.relay.backends.ports import Counters
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.store import RelayStore


@dataclass
class AccountServices:
    settings: AccountSettings
    passwords: Passwords
    vault: Vault  # stored Foundry credentials
    world_users: UsersRecorder  # the worlds' player lists, kept in the store
    remote_requests: RemoteRequestLog  # the log of cross-world requests
    module_events: ModuleEventLog  # the log of the worlds' module-notify reports
    base_path: str = ""  # RelayConfig.base_path: the prefix of the relay's links
    pending: set[asyncio.Task[None]] = field(default_factory=set)  # mails being sent

    async def login(self, store: RelayStore, email: str, password: str) -> User | None:
        """The account of `email` if `password` is its password, else None; an unknown or
        malformed email costs the same hash as a wrong password (passwords.py)."""
        address = bare_email(email)
        user = await asyncio.to_thread(users.user_by_email, store, address) if address else None
        ok = await self.passwords.verify(user.password_hash if user else None, password)
        return user if ok else None

    async def close(self) -> None:
        """Stop the mails still being sent (the relay is stopping)."""
        for task in list(self.pending):
            task.cancel()
        for task in list(self.pending):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.world_users.close()
        await self.remote_requests.close()
        await self.module_events.close()


ACCOUNTS = web.AppKey("vttrelay_accounts", AccountServices)


def services(request: web.Request) -> AccountServices:
    return request.app[ACCOUNTS]


def install(
    app: web.Application, config: RelayConfig, store: RelayStore, counters: Counters
) -> AccountServices:
    """Put the account services in `app` (`counters`: where the worlds' report budgets are
    counted); mails still in flight are stopped at cleanup."""
    settings = config.accounts
    made = AccountServices(
        settings=settings,
        passwords=Passwords(),
        vault=Vault(store, settings.credentials_key, config.data_dir),
        world_users=UsersRecorder(store),
        remote_requests=RemoteRequestLog(store),
        module_events=ModuleEventLog(store, counters),
        base_path=config.base_path,
    )
    app[ACCOUNTS] = made

    async def close(app: web.Application) -> None:
        await made.close()

    app.on_cleanup.append(close)
    return made
