"""The session handshake (files-sheet-sessions §4.3-4.4): RSA-2048, RSA-OAEP-SHA256 over
{password, nonce}, a single-use token for five minutes, the reference's refusals in order; the
Foundry host list; stored world names."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from tests.support.clock import FakeClock

from vttrelay.sessions.catalog import CatalogError, WorldCatalog
from vttrelay.sessions.handshake import HandshakeError, Handshakes, decrypt_password
from vttrelay.sessions.model import host_allowed


def encrypt(pem: str, payload: bytes) -> str:
    """As the peer suite does (Node's publicEncrypt with OAEP padding and sha256)."""
    key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(key, rsa.RSAPublicKey)
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    return base64.b64encode(key.encrypt(payload, oaep)).decode()


def test_the_handshake_answer_and_its_key() -> None:
    made = Handshakes().create("acct", "http://foundry:30000", "Gamemaster", "test-world")
    answer = made.answer("local")
    assert list(answer) == sorted(answer)
    assert len(answer["token"]) == 64 and len(answer["nonce"]) == 32
    int(answer["token"], 16), int(answer["nonce"], 16)
    pem = answer["publicKey"]
    assert pem.startswith("-----BEGIN PUBLIC KEY-----\n") and pem.endswith(
        "-----END PUBLIC KEY-----\n"
    )
    key = serialization.load_pem_public_key(pem.encode())
    assert isinstance(key, rsa.RSAPublicKey) and key.key_size == 2048
    assert answer["expires"].endswith("Z") and answer["instanceId"] == "local"
    sealed = encrypt(pem, orjson.dumps({"password": "s3cret", "nonce": made.nonce}))
    assert decrypt_password(made, sealed) == "s3cret"
    empty = encrypt(pem, orjson.dumps({"password": "", "nonce": made.nonce, "x": 1}))
    assert decrypt_password(made, empty) == ""  # a passwordless GM


def test_refusals_in_the_references_order() -> None:
    handshakes = Handshakes()
    made = handshakes.create("acct", "http://f", "gm", "")
    pem = made.public_pem()
    cases = [
        ("not base64!", 400, "Invalid encrypted password encoding"),
        (base64.b64encode(b"x" * 256).decode(), 400, "Failed to decrypt password"),
        (encrypt(pem, b"not json"), 400, "Invalid decrypted credential format"),
        (encrypt(pem, orjson.dumps({"password": "p", "nonce": "0" * 32})), 401, "Nonce mismatch"),
    ]
    for sealed, status, text in cases:
        with pytest.raises(HandshakeError) as refused:
            decrypt_password(made, sealed)
        assert (refused.value.status, refused.value.text) == (status, text)


def test_tokens_are_single_use_per_account_and_expire() -> None:
    clock = FakeClock()
    handshakes = Handshakes(ttl=300, clock=clock)
    made = handshakes.create("acct", "http://f", "gm", "")
    with pytest.raises(HandshakeError):
        handshakes.take(made.token, "another-account")  # and it is gone now
    with pytest.raises(HandshakeError):
        handshakes.take(made.token, "acct")
    again = handshakes.create("acct", "http://f", "gm", "")
    assert handshakes.take(again.token, "acct") is again
    with pytest.raises(HandshakeError):
        handshakes.take(again.token, "acct")
    late = handshakes.create("acct", "http://f", "gm", "")
    clock.advance(300)
    assert handshakes.take(late.token, "acct") is late  # still good at the last instant
    late = handshakes.create("acct", "http://f", "gm", "")
    clock.advance(300.001)
    with pytest.raises(HandshakeError) as refused:
        handshakes.take(late.token, "acct")
    assert refused.value.text == "Invalid or expired handshake token"


def test_handshakes_in_memory_are_bounded() -> None:
    handshakes = Handshakes(limit=3)
    made = [handshakes.create("a", "http://f", "gm", "") for _ in range(4)]
    with pytest.raises(HandshakeError):
        handshakes.take(made[0].token, "a")  # the oldest gave way
    assert handshakes.take(made[3].token, "a") is made[3]


def test_foundry_hosts_the_operator_allows() -> None:
    allowed = ("foundry.example", "127.0.0.1:30000")
    assert host_allowed("https://foundry.example/game", allowed)
    assert host_allowed("http://127.0.0.1:30000", allowed)
    assert not host_allowed("http://127.0.0.1:30001", allowed)
    assert not host_allowed("http://evil.example", allowed)
    assert not host_allowed("file:///etc/passwd", allowed)
    assert not host_allowed("http://foundry.example", ())  # none by default


def test_stored_world_names(tmp_path: Path) -> None:
    catalog = WorldCatalog(tmp_path)
    made = catalog.create("acct", "camp")
    assert made.client_id.startswith("camp-") and catalog.get("acct", "camp") == made
    other = catalog.create("other", "camp")
    assert other.client_id != made.client_id
    for bad in ("", "../x", "a/b", "-x", "x" * 49, ".hidden"):
        with pytest.raises(CatalogError):
            catalog.create("acct", bad)
    with pytest.raises(CatalogError) as refused:
        catalog.create("acct", "camp")
    assert refused.value.status == 409
    assert [w.name for w in catalog.list("acct")] == ["camp"]


def test_an_account_makes_a_bounded_number_of_handshakes_a_minute() -> None:
    handshakes = Handshakes(per_minute=3)
    assert [handshakes.allow("a") for _ in range(4)] == [True, True, True, False]
    assert handshakes.allow("b")  # another account has its own budget
