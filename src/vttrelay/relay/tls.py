"""TLS in the relay itself (`vttrelay serve --tls-cert/--tls-key`): the server's SSL context,
and its certificate reloaded in place (SIGHUP), so a renewed certificate needs no restart.

`server_context(cert, key)` loads the PEM files (the certificate chain, then its private key) or
raises `TlsError` naming the setting that is wrong. `reload(context, cert, key)` loads them again
into the same context: connections opened afterwards are shaken hands with the new certificate,
open ones keep theirs. A file that no longer loads leaves the context as it was.
"""

from __future__ import annotations

import ssl
from pathlib import Path


class TlsError(ValueError):
    """A certificate or key that cannot be used; the message names the setting."""


def _load(context: ssl.SSLContext, cert: str, key: str) -> None:
    for setting, path in (("--tls-cert", cert), ("--tls-key", key)):
        try:
            Path(path).read_bytes()
        except OSError as exc:
            raise TlsError(f"{setting}: cannot read {path}: {exc.strerror}") from None
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise TlsError(
            f"--tls-cert/--tls-key: not a PEM certificate chain and its private key "
            f"({exc.reason or exc})"
        ) from None


def server_context(cert: str, key: str) -> ssl.SSLContext:
    """A server context (TLS 1.2 or later) with this certificate chain and key."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load(context, cert, key)
    return context


def reload(context: ssl.SSLContext, cert: str, key: str) -> None:
    """Load the files again into `context` (raises `TlsError`, `context` unchanged, if they no
    longer load: `load_cert_chain` checks the key against the certificate before using them)."""
    _load(context, cert, key)


def loopback_client_context() -> ssl.SSLContext:
    """The context the embedded world connects to its own relay with, over loopback: the
    relay's certificate names its public host, not 127.0.0.1, and this connection never leaves
    the machine, so it is encrypted but not verified."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
