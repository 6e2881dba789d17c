"""The file routes end to end (files-sheet-sessions §1, §5.1): `POST /upload` (JSON and raw
bodies, small ones in one frame and large ones streamed to the world in chunks), `GET
/file-system`, `GET /download` (bytes and base64), over a real relay and the embedded world,
with the module's reply shapes, the FILES_BROWSE / FILES_UPLOAD rules, the key's forced user and
allowed worlds, and the limits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from tests.support.e2e import CLIENT_ID, Api
from tests.support.files import data_url, png, raw

from vttrelay.relay import files as relay_files
from vttrelay.relay.routes import ALL_SCOPES

HELLO = "SGVsbG8gZnJvbSBSRVNUIEFQSSB0ZXN0IQ=="  # "Hello from REST API test!"
UPLOAD_QUERY = {"path": "rest-api-tests", "source": "data", "filename": "test-file.txt"}


def store_root(world: Any) -> Path:
    root: Path = world.world.files.root
    return root


async def test_the_peer_suites_journey(relay: Any, world: Any, api: Api) -> None:
    body: dict[str, Any] = {"fileData": f"data:text/plain;base64,{HELLO}", "overwrite": True}
    body["mimeType"] = "text/plain"
    status, reply = await api("POST", "/upload", body, mimeType="text/plain", **UPLOAD_QUERY)
    assert status == 200, reply
    assert reply["type"] == "upload-file-result" and reply["success"] is True
    assert reply["path"] == "rest-api-tests/test-file.txt"
    on_disk = store_root(world) / "data" / "rest-api-tests" / "test-file.txt"
    assert on_disk.read_bytes() == b"Hello from REST API test!"

    status, listing = await api("GET", "/file-system", source="data", recursive="false")
    assert status == 200, listing
    assert list(listing) == ["type", "requestId", "success", "path", "source", "results"] + [
        "recursive"
    ]
    assert listing["source"] == "data" and listing["path"] == "" and listing["recursive"] is False
    entry = {"name": "rest-api-tests", "path": "rest-api-tests", "type": "directory"}
    assert entry in listing["results"]

    status, got = await api(
        "GET", "/download", path="rest-api-tests/test-file.txt", source="data", format="base64"
    )
    assert status == 200, got
    assert list(got) == sorted(got)  # the relay's own JSON: sorted keys, as the reference's
    assert got["success"] is True and got["path"] == "rest-api-tests/test-file.txt"
    assert "text/plain" in got["mimeType"] and got["filename"] == "test-file.txt"
    assert got["fileData"].split(",", 1)[1] == HELLO


async def test_download_answers_the_bytes_with_their_headers(relay: Any, world: Any) -> None:
    key = relay.key(ALL_SCOPES)
    folder = store_root(world) / "data" / "maps"
    folder.mkdir()
    (folder / "cave map.png").write_bytes(b"\x89PNG fake bytes")
    answer = await raw(relay, key, "GET", "/download", path="maps/cave map.png")
    assert answer.status == 200
    assert answer.body == b"\x89PNG fake bytes"
    assert answer.headers["Content-Type"] == "image/png"
    assert answer.headers["Content-Disposition"] == 'attachment; filename="cave map.png"'
    assert answer.headers["Content-Length"] == str(len(b"\x89PNG fake bytes"))
    assert "Content-Disposition" in answer.headers["Access-Control-Expose-Headers"]

    missing = await raw(relay, key, "GET", "/download", path="maps/none.png")
    assert missing.status == 400
    assert set(missing.json()) == {"error", "requestId"}
    assert missing.json()["error"] == "Failed to download file: 404 Not Found"
    no_path = await raw(relay, key, "GET", "/download")
    assert (no_path.status, no_path.json()["error"]) == (400, "Missing required parameter (path)")
    url = await raw(relay, key, "GET", "/download", path="http://127.0.0.1:1/secret")
    assert url.status == 400 and "fetches no URLs" in url.json()["error"]


async def test_raw_bodies_are_the_file_or_a_data_url(relay: Any, world: Any) -> None:
    key = relay.key(ALL_SCOPES)
    octets = bytes(range(256)) * 4
    answer = await raw(
        relay,
        key,
        "POST",
        "/upload",
        octets,
        {"Content-Type": "application/octet-stream"},
        path="bin",
        filename="all-bytes.bin",
    )
    assert answer.status == 200, answer.body
    assert answer.json()["path"] == "bin/all-bytes.bin"
    assert (store_root(world) / "data" / "bin" / "all-bytes.bin").read_bytes() == octets
    text = f"data:text/plain;base64,{HELLO}".encode()
    answer = await raw(
        relay,
        key,
        "POST",
        "/upload",
        text,
        {"Content-Type": "text/plain"},
        path="/",
        filename="hello.txt",
    )
    assert answer.status == 200, answer.body
    assert answer.json()["path"] == "hello.txt"
    assert (store_root(world) / "data" / "hello.txt").read_bytes() == b"Hello from REST API test!"
    multipart = await raw(
        relay,
        key,
        "POST",
        "/upload",
        b"--x\r\n",
        {"Content-Type": "multipart/form-data; boundary=x"},
        path="a",
        filename="b",
    )
    assert multipart.status == 400


async def test_a_large_upload_is_streamed_to_the_world(relay: Any, world: Any, api: Api) -> None:
    size = relay_files.INLINE_BYTES * 2 + 12345  # three chunks and a bit past the inline size
    payload = os.urandom(size)
    body = {"path": "big", "filename": "blob.bin", "fileData": data_url("x/y", payload)}
    sent_before = world.agent.sent["upload-file-result"]
    status, reply = await api("POST", "/upload", body)
    assert status == 200, reply
    assert reply == {
        "type": "upload-file-result",
        "requestId": reply["requestId"],
        "success": True,
        "path": "big/blob.bin",
    }
    chunks = -(-size // relay_files.CHUNK_BYTES)
    assert world.agent.sent["upload-file-result"] - sent_before == chunks + 2  # ready, commit
    assert (store_root(world) / "data" / "big" / "blob.bin").read_bytes() == payload
    assert list((store_root(world) / ".partial").iterdir()) == []
    # a refusal comes before any byte moves: the file exists and overwrite is not set
    status, reply = await api("POST", "/upload", body)
    assert status == 400
    assert reply["error"] == "File already exists. Set overwrite to true to replace it."
    key = relay.key(ALL_SCOPES)
    answer = await raw(
        relay,
        key,
        "POST",
        "/upload",
        payload[::-1],
        {"Content-Type": "application/octet-stream"},
        path="big",
        filename="blob.bin",
        overwrite="true",
    )
    assert answer.status == 200, answer.body
    assert (store_root(world) / "data" / "big" / "blob.bin").read_bytes() == payload[::-1]
    assert not list(relay.config.data_dir.joinpath(relay_files.SPOOL_DIR).iterdir())


async def test_a_module_world_gets_one_frame(relay: Any) -> None:
    """A world that does not stream (the Foundry module answers `Missing file data` to the
    stream frame) receives the whole upload as one data URL, as the reference sends it."""
    frames: list[dict[str, Any]] = []

    def module(frame: dict[str, Any]) -> dict[str, Any]:
        frames.append(frame)
        head = {"type": "upload-file-result", "requestId": frame["requestId"]}
        if "fileData" not in frame:
            return {**head, "success": False, "error": relay_files.NO_DATA}
        return {**head, "success": True, "path": f"{frame['path']}/{frame['filename']}"}

    await relay.world("module-world", handler=module)
    key = relay.key(ALL_SCOPES)
    payload = os.urandom(relay_files.INLINE_BYTES + 1)
    answer = await raw(
        relay,
        key,
        "POST",
        "/upload",
        payload,
        {"Content-Type": "application/octet-stream"},
        path="p",
        filename="f.bin",
        mimeType="application/x-test",
    )
    assert answer.status == 200, answer.body
    assert [("stream" in f, "fileData" in f) for f in frames] == [(True, False), (False, True)]
    assert frames[1]["fileData"] == data_url("application/x-test", payload)
    assert frames[1]["mimeType"] == "application/x-test" and frames[1]["source"] == "data"
    json_type = {"Content-Type": "application/json"}
    small = await raw(relay, key, "POST", "/upload", b"{}", json_type, path="p", filename="f.bin")
    assert small.status == 400  # JSON mode: no fileData
    assert small.json()["error"] == relay_files.NO_DATA


async def test_upload_refusals(relay: Any, world: Any, api: Api) -> None:
    status, reply = await api("POST", "/upload", {})
    assert (status, reply) == (400, {"error": "'path' and 'filename' are required"})
    bad = {"path": "a", "filename": "b.txt"}
    cases = {
        "abc": "Invalid file data format: must be data URL with base64 content",
        "data:text/plain;base64,": "No base64 data found in file data",
        "data:text/plain;base64,@@@@": "Invalid base64 data: Only base64 data is allowed",
        "data:text/plain;base64,====": "Invalid base64 data: Leading padding not allowed",
    }
    for file_data, text in cases.items():
        status, reply = await api("POST", "/upload", {**bad, "fileData": file_data})
        assert (status, reply["error"], reply["success"]) == (400, text, False), file_data
        assert reply["type"] == "upload-file-result"
    status, reply = await api(
        "POST", "/upload", {**bad, "source": "public", "fileData": f"data:,{HELLO}"}
    )
    assert (status, reply["error"]) == (400, "The 'public' source is read-only")
    status, reply = await api("POST", "/upload", {**bad, "source": "s3", "fileData": "data:,QQ=="})
    assert status == 400 and reply["error"].startswith("Unknown file source 's3'")
    key = relay.key(ALL_SCOPES)
    json_type = {"Content-Type": "application/json"}
    broken = await raw(relay, key, "POST", "/upload", b'{"path": ', json_type, filename="b")
    assert broken.status == 400 and broken.json()["error"].startswith("invalid JSON: ")
    assert not list((store_root(world) / "data").iterdir())
    # raw mode: those bytes are the file
    kept = await raw(relay, key, "POST", "/upload", b'{"path": ', path="a", filename="b")
    assert kept.status == 200
    assert (store_root(world) / "data" / "a" / "b").read_bytes() == b'{"path": '


async def test_size_limits(relay_factory: Any, start_world: Any, tmp_path: Path) -> None:
    relay = await relay_factory(tmp_path / "small", max_body_mb=1)
    world = await start_world(relay)
    key = relay.key(ALL_SCOPES)
    big = os.urandom(1024 * 1024 + 1)
    declared = await raw(
        relay,
        key,
        "POST",
        "/upload",
        big,
        {"Content-Type": "application/octet-stream"},
        path="a",
        filename="b",
    )
    assert (declared.status, declared.json()) == (413, {"error": "Request body too large"})

    async def chunked() -> Any:
        for i in range(0, len(big), 65536):
            yield big[i : i + 65536]

    answer = await relay.call(
        "POST",
        "/upload",
        key=key,
        data=chunked(),
        headers={"Content-Type": "application/octet-stream"},
        params={"path": "a", "filename": "b"},
    )
    assert (answer.status, answer.json()) == (413, {"error": "Request body too large"})
    assert not (store_root(world) / "data" / "a").exists()


async def test_permissions_forced_user_and_allowed_worlds(relay: Any, world: Any) -> None:
    upload = {"path": "p", "filename": "f.txt", "fileData": f"data:text/plain;base64,{HELLO}"}
    aria = relay.key(ALL_SCOPES, user_id="Aria")
    for method, path, query, text in [
        ("GET", "/file-system", {}, "'FILES_BROWSE' permission required to browse the file system"),
        ("GET", "/download", {"path": "x"}, "'FILES_BROWSE' permission required to download files"),
    ]:
        answer = await raw(relay, aria, method, path, userId="Gamemaster", **query)
        assert answer.status == 400
        assert answer.json()["error"] == f"User 'Aria' does not have {text}"
    answer = await relay.call("POST", "/upload", key=aria, json=upload)
    assert answer.status == 400
    assert answer.json()["error"] == (
        "User 'Aria' does not have 'FILES_UPLOAD' permission required to upload files"
    )
    gm = relay.key(ALL_SCOPES)
    unknown = await raw(relay, gm, "GET", "/file-system", userId="nonexistent-user-xyz-99999")
    assert unknown.status == 400
    assert unknown.json() == {
        "type": "file-system-result",
        "requestId": unknown.json()["requestId"],
        "error": "User not found: nonexistent-user-xyz-99999",
        "data": None,
    }
    # the world's permission setting lets players browse (not upload)
    with world.world.store.transaction() as tx:
        from vttrelay.world.model import documents

        documents.set_setting(tx, "core.permissions", {"FILES_BROWSE": [1, 2, 3, 4]})
    assert (await raw(relay, aria, "GET", "/file-system")).status == 200
    assert (await relay.call("POST", "/upload", key=aria, json=upload)).status == 400
    elsewhere = relay.key(ALL_SCOPES, client_ids=["another-world"])
    for method, path in [("GET", "/file-system"), ("GET", "/download"), ("POST", "/upload")]:
        answer = await relay.call(
            method,
            path,
            key=elsewhere,
            json=upload if method == "POST" else None,
            params={"clientId": CLIENT_ID},
        )
        assert answer.status == 403, (path, answer.body)
    reader = relay.key(("file:read",))
    answer = await relay.call("POST", "/upload", key=reader, json=upload)
    assert answer.json() == {"error": "API key lacks required scope: file:write"}


def _escape_link(world: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, store_root(world) / "data" / "link")


TRAVERSALS = {
    "dot-dot": ("../world.db", "'..' is not allowed"),
    "nested dot-dot": ("a/../../world.db", "'..' is not allowed"),
    "encoded dot-dot": ("%2e%2e/world.db", "percent-encoded dots and separators"),
    "encoded separator": ("..%2fworld.db", "percent-encoded dots and separators"),
    "backslash": ("..\\world.db", "use '/' as the separator"),
    "NUL byte": ("a\x00.txt", "control character"),
    "drive letter": ("C:/Windows/win.ini", "drive letters are not allowed"),
    "overlong name": ("x" * 256, "Name too long"),
    "symlink out": ("link/secret.txt", "leads outside the 'data' source"),
}


async def test_no_path_leaves_the_store(relay: Any, world: Any, api: Api, tmp_path: Path) -> None:
    _escape_link(world, tmp_path)
    (store_root(world).parent / "note.txt").write_text("next to the store")
    for name, (path, text) in TRAVERSALS.items():
        status, got = await api("GET", "/download", path=path)
        assert status == 400 and text in got["error"], (name, got)
        status, got = await api("GET", "/file-system", path=path)
        assert status == 400 and text in got["error"], (name, got)
        upload = {"path": path, "filename": "x.txt", "fileData": "data:,QQ=="}
        status, got = await api("POST", "/upload", upload)
        assert status == 400 and text in got["error"], (name, got)
        status, got = await api("POST", "/upload", {**upload, "path": "ok", "filename": path})
        assert status == 400, (name, got)
    # an absolute path and doubled separators stay inside the store
    status, got = await api("GET", "/download", path="/etc/passwd")
    assert (status, got["error"]) == (400, "Failed to download file: 404 Not Found")
    upload = {"path": "//abs//dir/", "filename": "f.txt", "fileData": "data:,QQ=="}
    status, got = await api("POST", "/upload", upload)
    assert (status, got["path"]) == (200, "abs/dir/f.txt")
    assert (store_root(world) / "data" / "abs" / "dir" / "f.txt").read_bytes() == b"A"
    status, listing = await api("GET", "/file-system", recursive=True)
    assert status == 200
    assert "link" not in [e["name"] for e in listing["results"]]  # a link out is not listed
    assert (tmp_path / "outside" / "secret.txt").read_text() == "secret"
    assert not (tmp_path / "outside" / "x.txt").exists()


async def test_recursive_listing_follows_the_module(relay: Any, world: Any, api: Api) -> None:
    data = store_root(world) / "data"
    for folder in ("a/b/c/d", "a/e", "z"):
        (data / folder).mkdir(parents=True)
    (data / "a" / "one.txt").write_text("1")
    (data / "a" / "b" / "c" / "deep.txt").write_text("2")
    (data / "top.txt").write_text("3")
    status, listing = await api("GET", "/file-system", recursive=True)
    assert status == 200, listing
    assert [e["path"] for e in listing["results"]] == [
        "a",
        "z",
        "top.txt",
        "a/b",
        "a/e",
        "a/one.txt",
        "a/b/c",
    ]
    status, listing = await api("GET", "/file-system", path="a/b", recursive=True)
    assert [e["path"] for e in listing["results"]] == ["a/b/c", "a/b/c/d", "a/b/c/deep.txt"]
    status, listing = await api("GET", "/file-system", path="nowhere")
    assert status == 400 and listing["success"] is False
    assert listing["error"] == "Directory 'nowhere' does not exist in the 'data' source"
    status, listing = await api("GET", "/file-system", recursive="maybe")
    assert (status, listing) == (400, {"error": "'recursive' must be a valid boolean"})
    body = orjson.loads(orjson.dumps(listing))
    assert body == listing


async def test_an_uploaded_image_is_a_scene_background_and_a_token_image(
    relay: Any, world: Any, api: Api
) -> None:
    """The peer suite's scene-image setup (§5.3): a 1000x1000 solid PNG uploaded, made the
    active scene's background; /scene/image draws it and /scene/image/raw answers its bytes.
    A token's texture from the store is drawn inside its disc."""
    from io import BytesIO

    from PIL import Image, ImageStat

    color = (50, 60, 80)
    upload = {
        "path": "rest-api-tests",
        "filename": "test-background.png",
        "source": "data",
        "mimeType": "image/png",
        "overwrite": True,
        "fileData": data_url("image/png", png(1000, 1000, color)),
    }
    status, reply = await api("POST", "/upload", upload)
    assert status == 200, reply
    red_png = data_url("image/png", png(64, 64, (220, 0, 0)))
    red = {**upload, "filename": "red.png", "fileData": red_png}
    assert (await api("POST", "/upload", red))[0] == 200
    status, scene = await api("GET", "/scene", active=True)
    scene_id = scene["data"]["_id"]
    status, reply = await api(
        "PUT",
        "/scene",
        {"sceneId": scene_id, "data": {"background": {"src": reply["path"]}, "padding": 0}},
    )
    assert status == 200, reply
    token = next(t for t in scene["data"]["tokens"] if t["name"] == "Goblin")
    status, reply = await api(
        "PUT",
        "/canvas/tokens",
        {"documentId": token["_id"], "data": {"texture": {"src": "rest-api-tests/red.png"}}},
    )
    assert status == 200, reply

    key = relay.key(ALL_SCOPES)
    answer = await raw(relay, key, "GET", "/scene/image", format="png", showGrid="false")
    assert answer.status == 200, answer.body
    picture = Image.open(BytesIO(answer.body)).convert("RGB")
    shown = (int(answer.headers["X-Image-Width"]), int(answer.headers["X-Image-Height"]))
    assert picture.size == shown
    corner = ImageStat.Stat(picture.crop((0, 0, 40, 40))).mean
    assert all(abs(c - e) <= 2 for c, e in zip(corner, color, strict=True)), corner
    size = scene["data"]["grid"]["size"]
    cx, cy = token["x"] + size / 2, token["y"] + size / 2
    inside = picture.getpixel((round(cx), round(cy)))
    assert isinstance(inside, tuple)
    assert inside[0] > 200 and inside[1] < 30, inside  # the token's red image

    status, body = await api("GET", "/scene/image/raw")
    assert status == 200, body
    data = body["data"]
    assert data["src"] == "rest-api-tests/test-background.png" and data["mimeType"] == "image/png"
    import base64

    decoded = Image.open(BytesIO(base64.b64decode(data["imageData"].split(",", 1)[1])))
    mean = ImageStat.Stat(decoded.convert("RGB")).mean
    assert all(abs(c - e) <= 15 for c, e in zip(mean, color, strict=True)), mean
