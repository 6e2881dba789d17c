"""The agent's pure rules: relay URLs as the module derives them, and its backoff."""

from __future__ import annotations

import pytest

from vttrelay.world.link.agent import backoff_delay, relay_http_url, relay_socket_url


@pytest.mark.parametrize(
    ("given", "socket", "http"),
    [
        ("http://127.0.0.1:3010", "ws://127.0.0.1:3010/relay", "http://127.0.0.1:3010"),
        ("https://relay.example/", "wss://relay.example/relay", "https://relay.example"),
        ("wss://relay.example/relay", "wss://relay.example/relay", "https://relay.example"),
        ("ws://h:1/relay/", "ws://h:1/relay", "http://h:1"),
        ("wss://h/foo", "wss://h/foo/relay", "https://h/foo"),
    ],
)
def test_urls(given: str, socket: str, http: str) -> None:
    assert relay_socket_url(given) == socket
    assert relay_http_url(given) == http


def test_bad_url() -> None:
    with pytest.raises(ValueError):
        relay_socket_url("ftp://x")


def test_backoff_doubles_from_one_second_to_a_30_second_cap() -> None:
    delays = [backoff_delay(n, 1.0, 30.0) for n in range(1, 9)]
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
