"""Test helpers for deployments: certificates the test makes, and a real nginx in front.

- `make_certificate(directory, name)`: a CA and a certificate it signed for `127.0.0.1` and
  `localhost` (the `cryptography` package), written as PEM files; `Certificate.client_context()`
  is an `ssl.SSLContext` that trusts that CA only.
- `deploy_block(name)`: a file under `docs/deploy/` that docs/deploy.md includes verbatim.
- `start_nginx(directory, port, upstream_port, certificate)`: Debian's nginx running
  `docs/deploy/nginx.conf` as it is, with only its listen address, certificate paths and upstream
  port replaced, in `directory` (its own prefix, pid and temp paths, logs there).
- `start_caddy(directory, port, upstream_port)`: Debian's caddy running `docs/deploy/Caddyfile`
  as it is, with only its site address and upstream replaced, after global options that keep it
  in `directory` (no admin port, its internal CA instead of ACME, nothing installed).
- Both return a `Proxy` (`url`, `ca`: the CA its certificate comes from), stopped by pid with
  `Proxy.stop()`.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DOCS = ROOT / "docs" / "deploy"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CADDY = shutil.which("caddy") or "/usr/bin/caddy"


@dataclass
class Certificate:
    """PEM files: the CA's certificate, the server's certificate chain and its key."""

    ca: Path
    cert: Path
    key: Path
    serial: int

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def make_certificate(directory: Path, name: str = "relay") -> Certificate:
    """A new CA and a server certificate it signed for 127.0.0.1 and localhost, in `directory`
    as `<name>-ca.pem`, `<name>.pem` and `<name>.key`."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{name} test CA"))
        .issuer_name(_name(f"{name} test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    serial = x509.random_serial_number()
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = Certificate(
        directory / f"{name}-ca.pem", directory / f"{name}.pem", directory / f"{name}.key", serial
    )
    paths.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def deploy_block(name: str) -> str:
    """`docs/deploy/<name>`, the file docs/deploy.md includes verbatim."""
    return (DEPLOY_DOCS / name).read_text(encoding="utf-8")


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text(errors='replace')[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"server not listening on {port}")


@dataclass
class Proxy:
    """A running reverse proxy (stopped by pid)."""

    proc: subprocess.Popen[bytes]
    port: int
    ca: Path  # the CA that signed its certificate
    stop_signal: int = signal.SIGTERM

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, self.stop_signal)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def nginx_site(port: int, upstream_port: int, certificate: Certificate) -> str:
    """docs/deploy/nginx.conf with the test's listen address, certificate and upstream."""
    text = deploy_block("nginx.conf")
    replaced = {
        "listen 443 ssl;": f"listen 127.0.0.1:{port} ssl;",
        "/etc/letsencrypt/live/vtt.example.com/fullchain.pem": str(certificate.cert),
        "/etc/letsencrypt/live/vtt.example.com/privkey.pem": str(certificate.key),
        "http://127.0.0.1:3010/": f"http://127.0.0.1:{upstream_port}/",
    }
    for old, new in replaced.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def start_nginx(directory: Path, port: int, upstream_port: int, certificate: Certificate) -> Proxy:
    """nginx in the foreground (`daemon off`, one worker) with docs/deploy/nginx.conf."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "site.conf").write_text(nginx_site(port, upstream_port, certificate))
    temp = {n: directory / n for n in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    error_log = directory / "error.log"
    (directory / "nginx.conf").write_text(
        f"""daemon off;
worker_processes 1;
pid {directory / "nginx.pid"};
error_log {error_log} info;
events {{ worker_connections 256; }}
http {{
    access_log {directory / "access.log"};
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {directory / "site.conf"};
}}
"""
    )
    command = [NGINX, "-p", str(directory), "-c", str(directory / "nginx.conf")]
    proc = _start([*command, "-e", str(error_log)], port, error_log, {})
    # SIGQUIT: nginx's graceful stop (the master ends its worker)
    return Proxy(proc, port, certificate.ca, signal.SIGQUIT)


def caddy_site(port: int, upstream_port: int) -> str:
    """docs/deploy/Caddyfile with the test's site address and upstream."""
    text = deploy_block("Caddyfile")
    replaced = {
        "vtt.example.com {": f"127.0.0.1:{port} {{",
        "reverse_proxy 127.0.0.1:3010 {": f"reverse_proxy 127.0.0.1:{upstream_port} {{",
    }
    for old, new in replaced.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def start_caddy(directory: Path, port: int, upstream_port: int) -> Proxy:
    """caddy in the foreground with docs/deploy/Caddyfile (its internal CA signs the site's
    certificate; the CA's root is `Proxy.ca`)."""
    directory.mkdir(parents=True, exist_ok=True)
    storage = directory / "storage"
    caddyfile = directory / "Caddyfile"
    caddyfile.write_text(
        f"""{{
\tadmin off
\tauto_https disable_redirects
\tlocal_certs
\tskip_install_trust
\tstorage file_system {storage}
\thttp_port {_unused_port()}
\thttps_port {port}
}}

{caddy_site(port, upstream_port)}"""
    )
    home = str(directory / "home")
    env = {"HOME": home, "XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home}
    log = directory / "caddy.log"
    proc = _start(
        [CADDY, "run", "--adapter", "caddyfile", "--config", str(caddyfile)], port, log, env
    )
    proxy = Proxy(proc, port, storage / "pki" / "authorities" / "local" / "root.crt")
    try:
        _wait_handshake(proxy)  # caddy signs the site's certificate once it runs
    except BaseException:
        proxy.stop()
        raise
    return proxy


def _wait_handshake(proxy: Proxy) -> None:
    deadline = time.monotonic() + 15
    while True:
        try:
            context = proxy.client_context()
            address = ("127.0.0.1", proxy.port)
            with (
                socket.create_connection(address, timeout=2) as raw,
                context.wrap_socket(raw, server_hostname="127.0.0.1"),
            ):
                return
        except (OSError, ssl.SSLError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(
    command: list[str], port: int, log: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """Start a server (its output in `log`) and wait until it listens on `port`."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env}
        )
    try:
        _wait_listening(port, proc, log)
    except BaseException:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        raise
    return proc
