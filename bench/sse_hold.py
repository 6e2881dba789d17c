"""A subscriber-holding process: opens N SSE streams and keeps them open, idle, until told.

Run: `python -m bench.sse_hold --url http://127.0.0.1:PORT --path '/chat/subscribe?clientId=X'
--key KEY --count N`. Each stream is a raw HTTP/1.1 GET over its own socket (asyncio streams, no
HTTP client library, so one process holds thousands cheaply); a stream counts as held once its
`event: connected` frame has arrived. The process then prints `HELD <n>` (or `ERROR <text>`)
and keeps reading (keep-alive comments) until stdin says `quit` or closes. Several of these
processes together hold the 10,000 idle subscribers of scenario 3.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from urllib.parse import urlsplit

CONNECT_CONCURRENCY = 25
CONNECTED_TIMEOUT = 120.0
CONNECTED_MARK = b"event: connected"


async def open_stream(host: str, port: int, path: str, key: str) -> asyncio.StreamWriter:
    """Open one SSE stream and wait for its `connected` event; returns the writer."""
    reader, writer = await asyncio.open_connection(host, port)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nx-api-key: {key}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    )
    writer.write(request.encode())
    seen = b""
    async with asyncio.timeout(CONNECTED_TIMEOUT):
        while CONNECTED_MARK not in seen:
            chunk = await reader.read(4096)
            if not chunk:
                raise ConnectionError(f"stream closed before `connected`: {seen[:300]!r}")
            seen += chunk
    if not seen.startswith(b"HTTP/1.1 200"):
        raise ConnectionError(f"stream refused: {seen[:300]!r}")
    asyncio.get_running_loop().create_task(drain(reader))
    return writer


async def drain(reader: asyncio.StreamReader) -> None:
    """Read and drop whatever the relay sends (keep-alive comments) until the stream ends."""
    with contextlib.suppress(ConnectionError):
        while await reader.read(65536):
            pass


async def run(url: str, path: str, key: str, count: int) -> int:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one() -> asyncio.StreamWriter:
        async with gate:
            return await open_stream(host, port, path, key)

    try:
        writers = await asyncio.gather(*(one() for _ in range(count)))
    except (OSError, TimeoutError) as exc:
        print(f"ERROR {type(exc).__name__}: {exc}", flush=True)
        return 1
    print(f"HELD {len(writers)}", flush=True)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    while True:
        line = await stdin.readline()
        if not line or line.strip() == b"quit":
            break
    for writer in writers:
        writer.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args(argv)
    try:
        import uvloop
    except ImportError:
        return asyncio.run(run(args.url, args.path, args.key, args.count))
    return uvloop.run(run(args.url, args.path, args.key, args.count))


if __name__ == "__main__":
    raise SystemExit(main())
