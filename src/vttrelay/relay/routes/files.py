"""The file routes (files-sheet-sessions §1): browse, download and upload the world's files."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import BQ, CLIENT_ID, USER_ID, B, Q, forward
from vttrelay.relay.routes.model import USE_TIMEOUT, Group, Param, Route, Sdk

NAME: Final = "File System"
FILE_TIMEOUT: Final = 15.0
DOWNLOAD_TIMEOUT: Final = 45.0

ROUTES: Final = (
    forward(
        "GET",
        "/file-system",
        "file-system",
        "List a folder of the world's files (`recursive`: two more levels).",
        NAME,
        Param(
            "path",
            None,
            Q,
            description="Path inside the source, e.g. `assets/maps`.",
            sdk_type="str",
        ),
        Param("source", None, Q, description="`data` (default) or `public`.", sdk_type="str"),
        Param("recursive", "boolean", Q, description="Also list sub-folders (two levels)."),
        scope="file:read",
        timeout=FILE_TIMEOUT,
        sdk=Sdk("browse", "FileListing"),
    ),
    Route(
        "GET",
        "/download",
        "local",
        "A file of the world: its bytes (Content-Type, Content-Disposition), or with "
        "`format=base64` the world's JSON reply with a data URL.",
        NAME,
        scope="file:read",
        action="download-file",
        handler="download",
        timeout=DOWNLOAD_TIMEOUT,
        params=(
            CLIENT_ID,
            USER_ID,
            Param(
                "path",
                None,
                Q,
                description="The file's path, e.g. `assets/map.png`.",
                sdk_type="str",
            ),
            Param(
                "source",
                None,
                Q,
                description="Accepted; `data` is searched, then `public`.",
                sdk_type="str",
            ),
            Param(
                "format",
                None,
                Q,
                description="`base64` for JSON; anything else: bytes.",
                sdk_type="str",
            ),
        ),
        extra={
            "content_type": "application/octet-stream",
            "responses": {"200": "The file's bytes (or JSON with format=base64)."},
        },
        sdk=Sdk("download", "bytes"),
    ),
    Route(
        "POST",
        "/upload",
        "local",
        "Upload a file: a JSON body with `fileData` (a base64 data URL), or the file itself as "
        "the body (any other Content-Type; `path`, `filename` in the query). Streamed to disk.",
        NAME,
        scope="file:write",
        action="upload-file",
        handler="upload",
        timeout=USE_TIMEOUT,
        params=(
            CLIENT_ID,
            USER_ID,
            Param("path", "string", BQ, description="Folder to put the file in."),
            Param("filename", "string", BQ, description="The file's name."),
            Param("source", "string", BQ, description="`data` (default); JSON: body only."),
            Param("mimeType", "string", BQ, description="The file's media type."),
            Param("overwrite", "boolean", BQ, description="Replace an existing file."),
            Param("fileData", "string", B, description="`data:<type>;base64,<bytes>`."),
        ),
        sdk=Sdk("upload", "FileUploaded"),
    ),
)

GROUP: Final = Group(NAME, "files", ROUTES)
