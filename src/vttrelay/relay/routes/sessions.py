"""The session routes (files-sheet-sessions §4): the reference's handshake, start, end and list,
and the embedded worlds an account keeps on the relay. Answered by the relay
(`relay.sessions_api`) with the session manager the composition root gives it."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import B, Q, local
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Session"
SCOPE: Final = "session:manage"
START_TIMEOUT: Final = 90.0

ROUTES: Final = (
    local(
        "POST",
        "/session-handshake",
        "session_handshake",
        "Begin a session: headers x-foundry-url, x-username (x-world-name); answers an RSA "
        "public key, a nonce and a single-use token valid five minutes.",
        NAME,
        scope=SCOPE,
        params=(
            Param("foundryUrl", "string", B, description="Else the x-foundry-url header."),
            Param("username", "string", B, description="Else the x-username header."),
            Param("worldName", "string", B, description="Else the x-world-name header."),
        ),
        sdk=Sdk("handshake", "dict[str, Json]"),
    ),
    local(
        "POST",
        "/start-session",
        "start_session",
        "Start a session: `worldName` alone starts the account's stored embedded world of that "
        "name; `handshakeToken` and `encryptedPassword` (RSA-OAEP-SHA256 of {password, nonce}) "
        "a browser session on a Foundry server; `credentialId` alone (with `worldName` or the "
        "credential's world) the same with a credential the account stored in /auth/credentials, "
        "no password sent. Answers once the world is connected.",
        NAME,
        scope=SCOPE,
        timeout=START_TIMEOUT,
        params=(
            Param("handshakeToken", "string", B, description="The handshake's token."),
            Param("encryptedPassword", "string", B, description="Base64 RSA-OAEP ciphertext."),
            Param("worldName", "string", B, description="A stored embedded world's name."),
            Param("credentialId", "string", B, description="A stored credential's id."),
        ),
        sdk=Sdk("start", "dict[str, Json]"),
    ),
    local(
        "DELETE",
        "/end-session",
        "end_session",
        "End one of the account's sessions (its world stops).",
        NAME,
        scope=SCOPE,
        params=(Param("sessionId", "string", (*Q, *B), description="The session's id."),),
        sdk=Sdk("end", "dict[str, Json]"),
    ),
    local(
        "GET",
        "/session",
        "sessions",
        "The account's active sessions.",
        NAME,
        scope=SCOPE,
        sdk=Sdk("list", "dict[str, Json]"),
    ),
    local(
        "GET",
        "/session/worlds",
        "session_worlds",
        "The embedded worlds the account keeps on the relay (and which run).",
        NAME,
        scope=SCOPE,
        sdk=Sdk("worlds", "dict[str, Json]"),
    ),
    local(
        "POST",
        "/session/worlds",
        "session_worlds",
        "Create an embedded world for the account (`name`); /start-session starts it.",
        NAME,
        scope=SCOPE,
        params=(Param("name", "string", B, required=True, description="The world's name."),),
        sdk=Sdk("create_world", "dict[str, Json]"),
    ),
)

GROUP: Final = Group(NAME, "sessions", ROUTES)
