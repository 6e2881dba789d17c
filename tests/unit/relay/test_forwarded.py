"""relay/forwarded.py: which address, scheme and host a trusted proxy's headers name."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from vttrelay.relay.forwarded import Forwarded, TrustedProxies, read_headers

TRUSTED = TrustedProxies.parse(["127.0.0.1", "10.0.0.0/8,::1"])


def said(*pairs: tuple[str, str]) -> Forwarded:
    return read_headers(CIMultiDict(pairs), TRUSTED)


def test_parse_and_trust() -> None:
    assert TRUSTED.trusts("127.0.0.1") and TRUSTED.trusts("10.1.2.3") and TRUSTED.trusts("::1")
    assert TRUSTED.trusts("::ffff:10.0.0.1")  # an IPv4 peer on a dual-stack socket
    assert not TRUSTED.trusts("127.0.0.2") and not TRUSTED.trusts("not an address")
    with pytest.raises(ValueError, match="'10.0.0.300'"):
        TrustedProxies.parse(["127.0.0.1, 10.0.0.300"])


def test_x_forwarded_for_read_from_the_right() -> None:
    # what the client wrote (left) is skipped once an untrusted hop is found
    assert said(("X-Forwarded-For", "203.0.113.9, 198.51.100.7")).remote == "198.51.100.7"
    # trusted hops (a chain of proxies) are skipped
    hops = ("X-Forwarded-For", "198.51.100.7, 10.0.0.2, 127.0.0.1")
    assert said(hops).remote == "198.51.100.7"
    # several header lines are one list; ports and brackets are dropped
    assert said(
        ("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "[2001:db8::1]:443")
    ).remote == ("2001:db8::1")
    assert said(("X-Forwarded-For", "198.51.100.7:5555")).remote == "198.51.100.7"
    # garbage on the right: nothing believed; all trusted: the leftmost
    assert said(("X-Forwarded-For", "1.1.1.1, nonsense")).remote is None
    assert said(("X-Forwarded-For", "10.0.0.5, 127.0.0.1")).remote == "10.0.0.5"


def test_scheme_and_host() -> None:
    got = said(
        ("X-Forwarded-For", "198.51.100.7"),
        ("X-Forwarded-Proto", "http, https"),
        ("X-Forwarded-Host", "vtt.example.com:8443"),
    )
    assert got == Forwarded("198.51.100.7", "https", "vtt.example.com:8443")
    assert said(("X-Forwarded-Proto", "wss")).scheme == "https"
    assert said(("X-Forwarded-Proto", "gopher")).scheme is None
    assert said(("X-Forwarded-Host", "evil.example/path")).host is None
    assert said(("X-Forwarded-Host", "[::1]:3010")).host == "[::1]:3010"


def test_forwarded_header_only_without_x_forwarded() -> None:
    rfc = ("Forwarded", 'for=203.0.113.9, for="[2001:db8::7]:4711";proto=https;host=vtt.example')
    assert said(rfc) == Forwarded("2001:db8::7", "https", "vtt.example")
    # nginx passes a client's Forwarded on untouched and sets X-Forwarded-For: that one wins
    assert said(rfc, ("X-Forwarded-For", "198.51.100.7")).remote == "198.51.100.7"
    assert said(("Forwarded", "for=unknown")).remote is None
    assert said() == Forwarded(None, None, None)
