"""GET /sheet end to end (files-sheet-sessions §2, §5.2): the embedded world draws an actor's
sheet; the picture is read back with OCR (Debian's tesseract) to show the actor's name and hit
points are on it, and changes when the hit points do. The reference's parameters and errors,
what a user may see (LIMITED: name and portrait only), the key's forced user and allowed worlds,
the selected token, JPEG with quality and scale, and an uploaded portrait."""

from __future__ import annotations

import shutil
import subprocess
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.support.e2e import CLIENT_ID, Api
from tests.support.files import data_url, png, raw

from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.world.render import sheet as sheet_render

ELARA = "Actor.elaraWizard00001"  # Aria owns her, Ben has LIMITED, others none
GOBLIN = "Actor.goblinNpc0000001"
TOK_ELARA = "Scene.sceneTavern00001.Token.tokElara00000001"
# Where the sheet (scale 1, no conditions) puts the name and the hit points (render/sheet.py).
NAME_BOX = (180, 20, 1000, 85)
HP_BOX = (170, 225, 400, 265)
HP_BAR = (175, 268, 390, 278)


def ocr(image: Image.Image, box: tuple[int, int, int, int], tmp_path: Path) -> str:
    """The text tesseract reads in `box` (one line)."""
    path = tmp_path / "crop.png"
    image.crop(box).save(path)
    done = subprocess.run(
        ["tesseract", str(path), "stdout", "--psm", "7"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return " ".join(done.stdout.split())


def hp_text(image: Image.Image, tmp_path: Path) -> str:
    """The hit points as read (spaces around the slash vary with the OCR)."""
    return ocr(image, HP_BOX, tmp_path).replace(" ", "")


needs_ocr = pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs tesseract-ocr")


async def sheet(relay: Any, key: str, **query: str) -> Any:
    return await raw(relay, key, "GET", "/sheet", **query)


@needs_ocr
async def test_the_sheet_shows_the_name_and_hit_points(
    relay: Any, world: Any, api: Api, tmp_path: Path
) -> None:
    key = relay.key(ALL_SCOPES)
    answer = await sheet(relay, key, uuid=ELARA, format="png")
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"] == "image/png"
    picture = Image.open(BytesIO(answer.body))
    assert picture.format == "PNG"
    assert picture.size == (
        int(answer.headers["X-Image-Width"]),
        int(answer.headers["X-Image-Height"]),
    )
    assert picture.width == sheet_render.WIDTH and picture.height > 900
    assert ocr(picture, NAME_BOX, tmp_path) == "Elara Quill"
    assert hp_text(picture, tmp_path) == "20/20"
    green = picture.convert("RGB").getpixel((200, 274))
    assert isinstance(green, tuple) and green[1] > green[0] + 40  # a full, green bar

    status, _ = await api(
        "POST", "/decrease", {"attribute": "system.attributes.hp.value", "amount": 15}, uuid=ELARA
    )
    assert status == 200
    hurt = Image.open(BytesIO((await sheet(relay, key, uuid=ELARA)).body)).convert("RGB")
    assert hp_text(hurt, tmp_path) == "5/20"
    red = hurt.getpixel((180, 274))
    assert isinstance(red, tuple) and red[0] > red[1] + 80  # a quarter bar turns red
    assert hurt.getpixel((380, 274)) != red  # and the rest of it is empty


async def test_jpeg_quality_and_scale(relay: Any, world: Any) -> None:
    key = relay.key(ALL_SCOPES)
    small = await sheet(relay, key, uuid=ELARA, format="jpeg", quality="0.5", scale="0.5")
    assert small.status == 200 and small.headers["Content-Type"] == "image/jpeg"
    picture = Image.open(BytesIO(small.body))
    assert picture.format == "JPEG" and picture.width == sheet_render.WIDTH // 2
    best = await sheet(relay, key, uuid=ELARA, format="jpeg", quality="0.95", scale="0.5")
    assert len(best.body) > len(small.body)
    jpg = await sheet(relay, key, uuid=ELARA, format="jpg", scale="x")  # only `jpeg` is JPEG
    assert jpg.headers["Content-Type"] == "image/png"
    assert Image.open(BytesIO(jpg.body)).width == sheet_render.WIDTH  # unparsable scale: 1
    big = await sheet(relay, key, uuid=ELARA, scale="50")
    assert Image.open(BytesIO(big.body)).width == sheet_render.WIDTH * sheet_render.MAX_SCALE


async def test_errors_in_the_references_shapes(relay: Any, world: Any) -> None:
    key = relay.key(ALL_SCOPES)
    missing = await sheet(relay, key)
    assert (missing.status, missing.json()) == (
        400,
        {"error": "Either 'uuid' or 'selected' is required"},
    )
    for query, text in [
        ({"uuid": "Actor.fakeId12345678"}, "Entity not found"),
        ({"uuid": "Scene.sceneTavern00001"}, "Actor has no sheet"),
        (
            {"uuid": GOBLIN, "userId": "nonexistent-user-xyz-99999"},
            "User not found: nonexistent-user-xyz-99999",
        ),
        (
            {"uuid": GOBLIN, "userId": "Aria"},
            "User 'Aria' does not have permission to view this sheet",
        ),
        ({"selected": "true"}, "Entity not found"),  # nothing selected
    ]:
        answer = await sheet(relay, key, **query)
        assert answer.status == 400, query
        assert answer.json() == {"error": text, "requestId": answer.json()["requestId"]}
        assert answer.json()["requestId"].startswith("sheet-screenshot_")
    reader = relay.key(("entity:read",))
    assert (await sheet(relay, reader, uuid=ELARA)).json() == {
        "error": "API key lacks required scope: sheet:read"
    }


@needs_ocr
async def test_limited_users_see_the_name_and_portrait_only(
    relay: Any, world: Any, tmp_path: Path
) -> None:
    key = relay.key(ALL_SCOPES)
    full = Image.open(BytesIO((await sheet(relay, key, uuid=ELARA, userId="Aria")).body))
    limited_answer = await sheet(relay, key, uuid=ELARA, userId="Ben")
    assert limited_answer.status == 200
    limited = Image.open(BytesIO(limited_answer.body))
    assert ocr(limited, NAME_BOX, tmp_path) == "Elara Quill"
    assert limited.height < 320 < full.height
    # the key's forced user applies (the reference's handler ignores it): as Ben, whatever the
    # caller asks for
    ben = relay.key(ALL_SCOPES, user_id="Ben")
    forced = await sheet(relay, ben, uuid=ELARA, userId="Gamemaster")
    assert Image.open(BytesIO(forced.body)).height == limited.height
    refused = await sheet(relay, ben, uuid=GOBLIN)
    assert refused.json()["error"] == "User 'Ben' does not have permission to view this sheet"
    elsewhere = relay.key(ALL_SCOPES, client_ids=["another-world"])
    answer = await sheet(relay, elsewhere, uuid=ELARA, clientId=CLIENT_ID)
    assert answer.status == 403


async def test_the_selected_tokens_actor(relay: Any, world: Any, api: Api) -> None:
    status, _ = await api("POST", "/select", {"uuids": [TOK_ELARA], "overwrite": True})
    assert status == 200
    key = relay.key(ALL_SCOPES)
    by_selection = await sheet(relay, key, selected="true", actor="true")
    by_uuid = await sheet(relay, key, uuid=ELARA)
    assert by_selection.status == 200 and by_selection.body == by_uuid.body
    by_token = await sheet(relay, key, uuid=TOK_ELARA)  # a token's sheet is its actor's here
    assert by_token.body == by_uuid.body


async def test_an_uploaded_portrait(relay: Any, world: Any, api: Api) -> None:
    upload = {
        "path": "portraits",
        "filename": "elara.png",
        "fileData": data_url("image/png", png(64, 64, (30, 90, 200))),
    }
    status, reply = await api("POST", "/upload", upload)
    assert status == 200, reply
    status, _ = await api("PUT", "/update", {"data": {"img": reply["path"]}}, uuid=ELARA)
    assert status == 200
    key = relay.key(ALL_SCOPES)
    picture = Image.open(BytesIO((await sheet(relay, key, uuid=ELARA)).body)).convert("RGB")
    assert picture.getpixel((98, 86)) == (30, 90, 200)  # the portrait's centre
