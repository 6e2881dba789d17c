"""The file actions of the module's FilePicker router (files-sheet-sessions §1): `file-system`
(browse), `download-file`, `upload-file`, answered from the world's `FileStore`.

Checks in the module's order: an unknown `userId` (the dispatcher), the permission the world's
`core.permissions` setting gives that user's role (`FILES_BROWSE` to browse and download,
`FILES_UPLOAD` to upload; Foundry's defaults when unset; a GM always passes; no `userId` means the
GM's rights), then the action's own checks. Errors are `{type, requestId, success: false, error}`.

An upload comes whole (`fileData`, a base64 data URL, or `binaryData`, an array of bytes, as from
the module's callers) or streamed by the relay in three kinds of frame of the same action:
`stream: {size}` checks everything and opens a transfer (`{success, ready: true, transfer}`),
`transfer, offset, chunk` (base64) appends bytes, `transfer, commit: true` moves the file into
place and answers the module's reply (`transfer, abort: true` drops it). File I/O runs in a worker
thread, never on the world's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.files.paths import PathError
from vttrelay.world.files.store import FileStore, StoreError
from vttrelay.world.model.documents import GM_ROLE
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}
PERMISSIONS_SETTING: Final = "core.permissions"
# Foundry's defaults: Trusted Player (2) and above browse, Assistant GM (3) and above upload.
DEFAULT_ROLES: Final = {"FILES_BROWSE": (2, 3, 4), "FILES_UPLOAD": (3, 4)}
BAD_DATA_URL: Final = "Invalid file data format: must be data URL with base64 content"


def _truthy(value: Any) -> bool:
    return value is not None and value is not False and value != "" and value != 0


def _store(ctx: ActionContext) -> FileStore:
    store = ctx.files
    if store is None:
        raise ActionError("This world has no file store")
    return store


def _allowed(ctx: ActionContext, permission: str) -> bool:
    """`user.can(permission)`: the user's role is among the roles the world grants it."""
    user = ctx.user
    if user is None:
        return True
    role = int(user.get("role", 0))
    if role >= GM_ROLE:
        return True
    config = ctx.transact(lambda c: c.setting(PERMISSIONS_SETTING))
    roles = config.get(permission) if isinstance(config, dict) else None
    if not isinstance(roles, list):
        roles = list(DEFAULT_ROLES[permission])
    return role in roles


def _require(ctx: ActionContext, permission: str, operation: str) -> None:
    if not _allowed(ctx, permission):
        name = (ctx.user or {}).get("name", "")
        raise ActionError(
            f"User '{name}' does not have '{permission}' permission required to {operation}"
        )


def _text(frame: dict[str, Any], key: str, default: str = "") -> str:
    value = frame.get(key)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise ActionError(f"'{key}' must be a string")
    return value


async def _io(fn: Any, *args: Any) -> Any:
    """Run a store call in a worker thread; its refusals become the reply's error."""
    try:
        return await asyncio.to_thread(fn, *args)
    except (PathError, StoreError) as exc:
        raise ActionError(str(exc)) from None


@action("file-system", error_extra=FAILED)
async def file_system(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx)
    _require(ctx, "FILES_BROWSE", "browse the file system")
    path, source = _text(frame, "path"), _text(frame, "source", "data")
    recursive = _truthy(frame.get("recursive"))
    results = await _io(store.browse, source, path, recursive)
    return {
        "success": True,
        "path": path,
        "source": source,
        "results": results,
        "recursive": recursive,
    }


@action("download-file", error_extra=FAILED)
async def download_file(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx)
    _require(ctx, "FILES_BROWSE", "download files")
    path = _text(frame, "path")
    if not path:
        raise ActionError("Missing required parameter (path)")
    if path.startswith("http"):
        raise ActionError("Failed to download file: the embedded world fetches no URLs")
    data, mime = await _io(store.read, path)
    encoded = await asyncio.to_thread(base64.b64encode, data)
    return {
        "success": True,
        "path": path,
        "fileData": f"data:{mime};base64,{encoded.decode()}",
        "filename": path.rsplit("/", 1)[-1] or "file",
        "mimeType": mime,
    }


def decode_file_data(frame: dict[str, Any], limit: int) -> bytes:
    """The bytes of a whole upload: `binaryData`, else `fileData` (the module's checks and
    texts); more than `limit` bytes is refused before decoding."""
    binary = frame.get("binaryData")
    if binary is not None:
        if not isinstance(binary, list) or not binary:
            raise ActionError("Invalid binary data: must be non-empty array")
        if len(binary) > limit:
            raise ActionError(f"File too large: {len(binary)} bytes (at most {limit} an upload)")
        try:
            return bytes(binary)
        except (TypeError, ValueError):
            raise ActionError("Invalid binary data: must be an array of bytes") from None
    data_url = frame.get("fileData")
    if not data_url:
        raise ActionError("Missing file data (either binaryData or fileData is required)")
    if not isinstance(data_url, str) or not data_url.startswith("data:") or "," not in data_url:
        raise ActionError(BAD_DATA_URL)
    payload = data_url.split(",", 1)[1]
    if not payload:
        raise ActionError("No base64 data found in file data")
    if len(payload) // 4 * 3 > limit:
        raise ActionError(f"File too large: more than {limit} bytes (at most that an upload)")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ActionError(f"Invalid base64 data: {exc}") from None
    if not data:
        raise ActionError("Decoded file data is empty")
    return data


async def _transfer_step(store: FileStore, frame: dict[str, Any]) -> dict[str, Any]:
    transfer = frame.get("transfer")
    if _truthy(frame.get("abort")):
        await asyncio.to_thread(store.abort, transfer)
        return {"success": True, "aborted": True}
    if _truthy(frame.get("commit")):
        return {"success": True, "path": await _io(store.commit, transfer)}
    offset, chunk = frame.get("offset"), frame.get("chunk")
    if not isinstance(offset, int) or not isinstance(chunk, str):
        raise ActionError("A chunk needs 'offset' (integer) and 'chunk' (base64)")
    try:
        data = base64.b64decode(chunk, validate=True)
    except (binascii.Error, ValueError) as exc:
        await asyncio.to_thread(store.abort, transfer)
        raise ActionError(f"Invalid base64 data: {exc}") from None
    return {"success": True, "received": await _io(store.write, transfer, offset, data)}


@action("upload-file", error_extra=FAILED)
async def upload_file(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    store = _store(ctx)
    if frame.get("transfer") is not None:
        return await _transfer_step(store, frame)
    _require(ctx, "FILES_UPLOAD", "upload files")
    path, filename = frame.get("path"), frame.get("filename")
    if not path or not filename:
        raise ActionError("Missing required parameters (path, filename)")
    if not isinstance(path, str) or not isinstance(filename, str):
        raise ActionError("'path' and 'filename' must be strings")
    source = _text(frame, "source", "data")
    overwrite = _truthy(frame.get("overwrite"))
    stream = frame.get("stream")
    if isinstance(stream, dict):
        size = stream.get("size")
        if not isinstance(size, int) or size <= 0:
            raise ActionError("Decoded file data is empty")
        transfer = await _io(store.begin, source, path, filename, overwrite, size)
        return {"success": True, "ready": True, "transfer": transfer.id}
    data = await asyncio.to_thread(decode_file_data, frame, store.max_upload_bytes)
    return {"success": True, "path": await _io(store.put, source, path, filename, data, overwrite)}
