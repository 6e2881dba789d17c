"""Trusted reverse proxies: the client's address, scheme and host as a proxy in front saw them.

Behind nginx or Caddy every connection comes from the proxy. With `RelayConfig.trusted_proxies`
(`vttrelay serve --trusted-proxy`, addresses or networks) a request whose peer is one of them is
handed on as `request.clone(remote=..., scheme=..., host=...)` from its headers, so per-IP limits,
logs and every link the relay writes (`pairUrl`, `relayUrl`, the dashboard's) see the client:

- the address: `X-Forwarded-For` read from the right, skipping the trusted proxies; the first
  address that is not one is the client (what a client wrote to the left of it is ignored, so a
  spoofed header changes nothing). All trusted: the leftmost.
- the scheme and host: the last `X-Forwarded-Proto` / `X-Forwarded-Host` value (the one the
  nearest proxy set); a scheme other than http/https/ws/wss or a host with other characters than
  a host name's is ignored.
- `Forwarded` (RFC 7239, `for=`, `proto=`, `host=`) is read the same way, but only when no
  `X-Forwarded-*` header came: nginx passes a client's `Forwarded` header on untouched.

A request from any other peer is handed on unchanged: its forwarding headers mean nothing.
Without trusted proxies `create_app` adds no middleware at all (no per-request cost).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware
from multidict import MultiMapping

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

MAX_HOPS = 32  # forwarded addresses read per request (a header is bounded by aiohttp's 8 KiB)
_HOST = re.compile(r"[A-Za-z0-9.\-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")
_X_FORWARDED = ("X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host")
_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


def parse_network(text: str) -> Network:
    """One `--trusted-proxy` entry: an address (`10.0.0.5`, `::1`) or a network (`10.0.0.0/8`).
    Raises ValueError naming the entry."""
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"not an address or network: {text.strip()!r}") from None


@dataclass(frozen=True)
class TrustedProxies:
    """The peers whose forwarding headers are believed."""

    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, entries: Iterable[str]) -> TrustedProxies:
        """From entries such as `127.0.0.1`, `10.0.0.0/8` (comma-separated ones are split)."""
        texts = [t for entry in entries for t in entry.split(",") if t.strip()]
        return cls(tuple(parse_network(t) for t in texts))

    def trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in net for net in self.networks)


@dataclass(frozen=True)
class Forwarded:
    """What a trusted proxy said about the client (None: it did not say, or said nonsense)."""

    remote: str | None
    scheme: str | None
    host: str | None


def _address(text: str) -> str | None:
    """An address of `X-Forwarded-For` or `for=`: `1.2.3.4`, `1.2.3.4:5`, `[::1]:5`, `::1`."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def _values(headers: MultiMapping[str], name: str) -> list[str]:
    """Every comma-separated value of every `name` header line, in order."""
    return [v for line in headers.getall(name, []) for v in line.split(",")]


def _last(values: list[str]) -> str | None:
    return values[-1].strip().strip('"') if values else None


def _client(hops: list[str], trusted: TrustedProxies) -> str | None:
    """The rightmost hop that is not a trusted proxy, else the leftmost (None: no valid hop)."""
    found: str | None = None
    for hop in reversed(hops[-MAX_HOPS:]):
        address = _address(hop)
        if address is None:
            return found  # garbage to the left of here was written by the client
        found = address
        if not trusted.trusts(address):
            return address
    return found


def read_headers(headers: MultiMapping[str], trusted: TrustedProxies) -> Forwarded:
    """The client as the forwarding headers of a trusted peer describe it."""
    if any(name in headers for name in _X_FORWARDED):
        hops = _values(headers, "X-Forwarded-For")
        protos = _values(headers, "X-Forwarded-Proto")
        hosts = _values(headers, "X-Forwarded-Host")
        return Forwarded(_client(hops, trusted), _scheme(_last(protos)), _host(_last(hosts)))
    elements = _forwarded_elements(headers.getall("Forwarded", []))
    if not elements:
        return Forwarded(None, None, None)
    fors = [e["for"] for e in elements if "for" in e]
    last = elements[-1]
    return Forwarded(_client(fors, trusted), _scheme(last.get("proto")), _host(last.get("host")))


def _forwarded_elements(lines: list[str]) -> list[dict[str, str]]:
    """RFC 7239 elements (`for=a;proto=https, for=b`) as dicts of lower-case names."""
    elements: list[dict[str, str]] = []
    for line in lines:
        for element in line.split(",")[:MAX_HOPS]:
            pairs = (p.partition("=") for p in element.split(";"))
            elements.append({k.strip().lower(): v.strip().strip('"') for k, _, v in pairs if v})
    return elements[-MAX_HOPS:]


def _scheme(text: str | None) -> str | None:
    return _SCHEMES.get(text.strip().lower()) if text else None


def _host(text: str | None) -> str | None:
    return text if text and _HOST.fullmatch(text) else None


def forwarded_middleware(trusted: TrustedProxies) -> Middleware:
    """The middleware that hands on a trusted proxy's request as the client's (module docstring).
    It goes before every other middleware, so they all see the client."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        peer = request.remote
        if peer is None or not trusted.trusts(peer):
            return await handler(request)
        said = read_headers(request.headers, trusted)
        changes: dict[str, Any] = {}
        if said.remote is not None:
            changes["remote"] = said.remote
        if said.scheme is not None:
            changes["scheme"] = said.scheme
        if said.host is not None:
            changes["host"] = said.host
        return await handler(request.clone(**changes) if changes else request)

    return middleware
