"""The file routes the relay answers itself (files-sheet-sessions §1): `POST /upload` and the
binary answer of `GET /download`. `GET /file-system` is a plain forward route.

`h_upload`: the key (scope `file:write`), then the body spooled to a temporary file as it arrives
(`upload_body.spool`: decoded, never whole in memory; 413 past the relay's body limit), then the
reference's checks (`'path' and 'filename' are required`), the target world (the key's allowed
worlds apply) and the key's forced `userId` (the reference forwards none: DESIGN §6 item 10).
A file up to `INLINE_BYTES` goes to the world in one `upload-file` frame with its data URL, as
the module expects. A larger one is streamed: a first frame with `stream: {size}` (the world
checks the user, permission, path and overwrite rule before any byte moves and answers
`ready` with a transfer id), then `CHUNK_BYTES` chunks, each acknowledged before the next (the
world writes them to disk), then a commit whose reply is the module's. A world that does not
stream (the Foundry module answers `Missing file data`) gets the one-frame upload instead. Each
step has the route's 30 s; past it 408 `Upload timed out`, and the world drops the transfer.

`h_download`: forwarded like any route; a reply with an `error` becomes 400
`{"error", "requestId"}`; `format=base64` answers the frame as JSON (sorted keys, as the
reference's encoder); otherwise the file's bytes with `Content-Type` and `Content-Disposition`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from aiohttp import web

from vttrelay.relay import core
from vttrelay.relay.backends.ports import WorldHandle
from vttrelay.relay.core import error
from vttrelay.relay.forward import (
    admit_request,
    module_error_response,
    read_params,
    reply_response,
    sorted_json_response,
)
from vttrelay.relay.link.pending import Reply, WorldGone
from vttrelay.relay.routes import Route
from vttrelay.relay.upload_body import NO_DATA, BodyError, Spooled, spool

INLINE_BYTES: Final = 4 * 1024 * 1024  # larger uploads are streamed to the world in chunks
CHUNK_BYTES: Final = 1024 * 1024
SPOOL_DIR: Final = "uploads"  # under the relay's data dir
UPLOAD_TIMED_OUT: Final = "Upload timed out"
PATH_AND_NAME: Final = "'path' and 'filename' are required"


def _issorted_json_response(request: web.Request) -> bool:
    kind = request.headers.get("Content-Type", "")
    return not kind or kind.lower().startswith("application/json")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class FileDeps:
    """What the file routes use: the request core and the relay's data directory (an upload is
    spooled in its `SPOOL_DIR` before it is streamed to the world)."""

    gate: core.Gate
    data_dir: Path


async def h_upload(request: web.Request, route: Route, deps: FileDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    json_mode = _issorted_json_response(request)
    if request.headers.get("Content-Type", "").lower().startswith("multipart/"):
        raise error(400, "Multipart bodies are not accepted: send the file as the body")
    folder = deps.data_dir / SPOOL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder) as out:
        try:
            body = await spool(
                request.content.iter_chunked(256 * 1024), json_mode, out, request.client_max_size
            )
        except BodyError as exc:
            raise error(exc.status, exc.text) from None
        query = request.query
        fields = body.fields
        path = _text(fields.get("path")) or query.get("path", "")
        filename = _text(fields.get("filename")) or query.get("filename", "")
        if not path or not filename:
            raise error(400, PATH_AND_NAME)
        world = await deps.gate.target_world(key, query.get("clientId"))
        options = fields if json_mode else query
        frame: dict[str, Any] = {
            "type": route.action,
            "requestId": core.new_request_id(str(route.action)),
            "path": path,
            "filename": filename,
            "source": _text(options.get("source")) or "data",
            "mimeType": _text(options.get("mimeType")) or body.media_type,
            "overwrite": (
                fields.get("overwrite") is True if json_mode else query.get("overwrite") == "true"
            ),
            "_scopes": list(key.scopes),
        }
        user = key.user_id or _text(fields.get("userId")) or query.get("userId")
        if user:
            frame["userId"] = user
        if body.problem is not None:
            return sorted_json_response(
                {
                    "type": f"{route.action}-result",
                    "requestId": frame["requestId"],
                    "success": False,
                    "error": body.problem,
                },
                400,
            )
        try:
            reply = await _send(world, frame, out, body, route.timeout)
        except TimeoutError:
            raise error(408, UPLOAD_TIMED_OUT) from None
        except WorldGone:
            raise error(503, core.WORLD_GONE) from None
    return reply_response(reply)


async def _send(
    world: WorldHandle, frame: dict[str, Any], out: IO[bytes], body: Spooled, timeout: float
) -> Reply:
    if body.size > INLINE_BYTES:
        head = {**frame, "stream": {"size": body.size}}
        reply = await world.request(head, timeout)
        ready = reply.frame
        if ready.get("ready") is True and isinstance(ready.get("transfer"), str):
            return await _stream(world, frame, ready["transfer"], out, timeout)
        if ready.get("error") != NO_DATA:
            return reply
    out.seek(0)
    data = await asyncio.to_thread(out.read)
    mime = frame["mimeType"] or "application/octet-stream"
    frame["fileData"] = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    del data
    return await world.request(frame, timeout)


async def _stream(
    world: WorldHandle, frame: dict[str, Any], transfer: str, out: IO[bytes], timeout: float
) -> Reply:
    """The chunks and the commit of a streamed upload; any failure drops the transfer."""
    action = str(frame["type"])
    base = {"type": action, "transfer": transfer, "_scopes": frame["_scopes"]}
    if "userId" in frame:
        base["userId"] = frame["userId"]
    done = False
    try:
        out.seek(0)
        offset = 0
        while chunk := await asyncio.to_thread(out.read, CHUNK_BYTES):
            step = {
                **base,
                "requestId": core.new_request_id(action),
                "offset": offset,
                "chunk": base64.b64encode(chunk).decode(),
            }
            reply = await world.request(step, timeout)
            if reply.is_error:
                return reply
            offset += len(chunk)
        commit = {**base, "requestId": core.new_request_id(action), "commit": True}
        reply = await world.request(commit, timeout)
        done = True
        return reply
    finally:
        if not done:
            abort = {**base, "requestId": core.new_request_id(action), "abort": True}
            task = asyncio.ensure_future(world.request(abort, timeout))
            task.add_done_callback(_quiet)


def _quiet(task: asyncio.Future[Any]) -> None:
    with contextlib.suppress(BaseException):
        task.result()


def _disposition(filename: str) -> str:
    safe = "".join(c for c in filename if c.isprintable() and c not in '"\\') or "file"
    return f'attachment; filename="{safe}"'


async def h_download(request: web.Request, route: Route, deps: FileDeps) -> web.StreamResponse:
    key = await core.admitted(admit_request(request, route, deps.gate))
    params = await read_params(request, route)
    reply = await deps.gate.forward(key, route, params)
    refused = module_error_response(reply)
    if refused is not None:
        return refused
    frame = reply.frame
    if params.get("format") == "base64":
        return sorted_json_response(frame)
    encoded = frame.get("fileData")
    data = None
    if isinstance(encoded, str) and encoded:
        try:
            data = base64.b64decode(encoded.split(",", 1)[-1], validate=True)
        except ValueError:
            data = None
    if not data:
        return sorted_json_response(frame)
    mime = _text(frame.get("mimeType")) or "application/octet-stream"
    headers = {"Content-Disposition": _disposition(_text(frame.get("filename")) or "file")}
    return web.Response(body=data, content_type=mime, headers=headers)


HANDLERS: Final = {"upload": h_upload, "download": h_download}
