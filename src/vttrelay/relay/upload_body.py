"""An upload's request body, read as it arrives and written to a spool file: never whole in
memory (files-sheet-sessions §1.4).

Two body modes, as the reference relay's: JSON (a `Content-Type` of `application/json`, or none)
is an object whose `fileData` is a base64 data URL; raw (any other type) is the file itself, or
the text of such a data URL. The data URL's base64 is decoded while it streams in (whole 4-char
groups at a time, `binascii`, C speed) and only the decoded bytes are written to the spool; the
rest of a JSON body (its other fields, at most `MAX_FIELDS_BYTES`) is kept and parsed once the
body is complete, with `fileData` in it as `""`. A body past `limit` decoded bytes stops with 413.

`Spooled.problem` is a data URL the module would refuse, with the module's text (`Invalid file
data format: ...`, `No base64 data found ...`, `Invalid base64 data: ...`, `Decoded file data is
empty`); the handler reports it after its own checks, in the module's reply shape.
"""

from __future__ import annotations

import binascii
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import IO, Any, Final

import orjson

BAD_DATA_URL: Final = "Invalid file data format: must be data URL with base64 content"
NO_DATA: Final = "Missing file data (either binaryData or fileData is required)"
MAX_FIELDS_BYTES: Final = 1024 * 1024  # a JSON body without its fileData
MAX_HEADER: Final = 512  # `data:<media type>;base64,`
_KEY: Final = b"fileData"


class BodyError(Exception):
    """A body that cannot be read: `status` (400, 413) and the reference's error text."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


@dataclass
class Spooled:
    """What a body held: its JSON fields (JSON mode), the decoded size and media type, and
    a problem with its file data (None: the spool holds the file)."""

    fields: dict[str, Any] = field(default_factory=dict)
    size: int = 0
    media_type: str = ""
    problem: str | None = None


class DataUrlDecoder:
    """Decodes the text of a base64 data URL fed in pieces into `out`, up to `limit` bytes."""

    def __init__(self, out: IO[bytes], limit: int) -> None:
        self.out = out
        self.limit = limit
        self.header = bytearray()
        self.in_body = False
        self.rest = b""
        self.size = 0
        self.seen_payload = False
        self.problem: str | None = None
        self.media_type = ""

    def feed(self, text: bytes) -> None:
        if self.problem is not None or not text:
            return
        if not self.in_body:
            comma = text.find(b",")
            head = text if comma < 0 else text[:comma]
            self.header += head
            if len(self.header) > MAX_HEADER or not (
                self.header.startswith(b"data:") or b"data:".startswith(bytes(self.header))
            ):
                self.problem = BAD_DATA_URL
                return
            if comma < 0:
                return
            self.in_body = True
            self.media_type = self.header[5:].split(b";")[0].decode("latin-1")
            text = text[comma + 1 :]
        if text:
            self.seen_payload = True
        data = self.rest + text
        whole = len(data) // 4 * 4
        self.rest = data[whole:]
        if whole:
            self._write(data[:whole], strict=True)

    def _write(self, data: bytes, strict: bool) -> None:
        try:
            decoded = binascii.a2b_base64(data, strict_mode=strict)
        except binascii.Error as exc:
            self.problem = f"Invalid base64 data: {exc}"
            return
        self.size += len(decoded)
        if self.size > self.limit:
            raise BodyError(413, "Request body too large")
        self.out.write(decoded)

    def finish(self) -> None:
        if self.problem is not None:
            return
        if not self.in_body:
            self.problem = BAD_DATA_URL
            return
        if not self.seen_payload:
            self.problem = "No base64 data found in file data"
            return
        if self.rest:
            self._write(self.rest + b"=" * (-len(self.rest) % 4), strict=False)
            self.rest = b""
        if self.problem is None and self.size == 0:
            self.problem = "Decoded file data is empty"


class JsonSplitter:
    """Walks a JSON body as it arrives: the top-level `fileData` string goes to a
    `DataUrlDecoder`, everything else to `fields` (with `fileData` left as `""`)."""

    def __init__(self, decoder: DataUrlDecoder) -> None:
        self.decoder = decoder
        self.fields = bytearray()
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.string_start = -1
        self.last_key = b""
        self.after_key = False  # the last top-level string was a key: a ':' follows
        self.value_next = False  # a top-level fileData value follows
        self.in_value = False  # inside the fileData string
        self.value_escape = False

    def feed(self, chunk: bytes) -> None:
        i = 0
        n = len(chunk)
        while i < n:
            if self.in_value:
                i = self._value(chunk, i)
                continue
            byte = chunk[i]
            i += 1
            self.fields.append(byte)
            if len(self.fields) > MAX_FIELDS_BYTES:
                raise BodyError(413, "Request body too large")
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif byte == 0x5C:
                    self.escaped = True
                elif byte == 0x22:
                    self.in_string = False
                    if self.depth == 1:
                        self.last_key = bytes(self.fields[self.string_start : -1])
                        self.after_key = True
                continue
            if byte == 0x22:
                if self.value_next and self.depth == 1:
                    self.value_next = False
                    self.in_value = True  # its text is decoded, not kept: "" stays
                    continue
                self.in_string = True
                self.string_start = len(self.fields)
            elif byte in (0x7B, 0x5B):
                self.depth += 1
                self.value_next = False
            elif byte in (0x7D, 0x5D):
                self.depth -= 1
            elif byte == 0x3A and self.depth == 1 and self.after_key:
                self.value_next = self.last_key == _KEY
                self.after_key = False
            elif byte not in (0x20, 0x09, 0x0A, 0x0D):
                self.value_next = False
                self.after_key = False

    def _value(self, chunk: bytes, i: int) -> int:
        """Consume the fileData string from `chunk[i:]`; returns where it stopped."""
        if self.value_escape:
            self.value_escape = False
            if chunk[i] != 0x2F:  # only `\/` can occur in base64 text
                self.decoder.problem = self.decoder.problem or BAD_DATA_URL
            else:
                self.decoder.feed(b"/")
            return i + 1
        end = chunk.find(b'"', i)
        stop = len(chunk) if end < 0 else end
        piece = chunk[i:stop]
        slash = piece.find(b"\\")
        if slash >= 0:  # up to the escape; the escape itself on the next round
            self.decoder.feed(piece[:slash])
            self.value_escape = True
            return i + slash + 1
        self.decoder.feed(piece)
        if end < 0:
            return stop
        self.in_value = False
        self.fields.append(0x22)
        return end + 1


async def spool(
    chunks: AsyncIterator[bytes], json_mode: bool, out: IO[bytes], limit: int
) -> Spooled:
    """Read a whole upload body from `chunks` into `out` (decoded file bytes) and return what
    it held. Raises BodyError (400 with the reference's texts, 413 past `limit`)."""
    decoder = DataUrlDecoder(out, limit)
    if json_mode:
        splitter = JsonSplitter(decoder)
        async for chunk in chunks:
            splitter.feed(chunk)
        if splitter.in_value:
            raise BodyError(400, "invalid JSON: unexpected end of JSON input")
        fields: Any = {}
        if splitter.fields.strip():
            try:
                fields = orjson.loads(splitter.fields)
            except orjson.JSONDecodeError as exc:
                raise BodyError(400, f"invalid JSON: {exc}") from None
            if not isinstance(fields, dict):
                raise BodyError(400, "invalid JSON: the body must be a JSON object")
        data_url = fields.get("fileData")
        if isinstance(data_url, str) and data_url and not decoder.header:
            decoder.feed(data_url.encode())  # a key written with escapes: kept in the fields
        if decoder.header:
            decoder.finish()
        elif fields.get("binaryData") is not None:
            return _binary(fields, out, limit)
        else:
            decoder.problem = NO_DATA
        return Spooled(fields, decoder.size, decoder.media_type, decoder.problem)
    head = bytearray()
    mode = ""  # "url": the text of a data URL; "raw": the file's own bytes
    raw_size = 0
    async for chunk in chunks:
        if not mode:
            head += chunk
            if len(head) < 5 and bytes(head) == b"data:"[: len(head)]:
                continue
            mode = "url" if head.startswith(b"data:") else "raw"
            chunk = bytes(head)
        if mode == "url":
            decoder.feed(chunk)
            continue
        raw_size += len(chunk)
        if raw_size > limit:
            raise BodyError(413, "Request body too large")
        out.write(chunk)
    if not mode and head:  # a body of fewer than 5 bytes, all a prefix of "data:"
        mode, raw_size = "raw", len(head)
        out.write(bytes(head))
    if mode == "url":
        decoder.finish()
        return Spooled({}, decoder.size, decoder.media_type, decoder.problem)
    return Spooled({}, raw_size, "", None if raw_size else "Decoded file data is empty")


def _binary(fields: dict[str, Any], out: IO[bytes], limit: int) -> Spooled:
    """A JSON body with `binaryData` (an array of byte values) instead of `fileData`."""
    binary = fields.get("binaryData")
    if not isinstance(binary, list) or not binary:
        return Spooled(fields, 0, "", "Invalid binary data: must be non-empty array")
    if len(binary) > limit:
        raise BodyError(413, "Request body too large")
    try:
        data = bytes(binary)
    except (TypeError, ValueError):
        return Spooled(fields, 0, "", "Invalid binary data: must be an array of bytes")
    out.write(data)
    return Spooled(fields, len(data), "", None)
