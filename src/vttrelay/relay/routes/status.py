"""The relay's own public routes: health, status, the API document and page, metrics."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import local
from vttrelay.relay.routes.model import Group, NoSdk, Sdk

NAME: Final = "Status"

HEALTH: Final = "Liveness of this relay instance."

ROUTES: Final = (
    local("GET", "/api/health", "health", HEALTH, NAME, sdk=Sdk("health", "HealthReply")),
    local(
        "GET",
        "/health",
        "health",
        HEALTH,
        NAME,
        sdk=NoSdk("the same handler as GET /api/health (status.health)"),
    ),
    local(
        "GET",
        "/api/status",
        "status",
        "Version, WebSocket path, the answering instance and how many are alive.",
        NAME,
        sdk=Sdk("status", "StatusReply"),
    ),
    local(
        "GET",
        "/openapi.json",
        "openapi",
        "This API as an OpenAPI 3.1 document.",
        NAME,
        sdk=Sdk("openapi", "OpenApiDocument"),
    ),
    local(
        "GET",
        "/docs",
        "docs",
        "Interactive API documentation.",
        NAME,
        sdk=NoSdk("an HTML page for people (the API reference)"),
    ),
    local(
        "GET",
        "/metrics",
        "metrics",
        "This instance's counters and gauges in the Prometheus text format.",
        NAME,
        sdk=NoSdk("Prometheus text for a metrics scraper, not JSON"),
    ),
)

GROUP: Final = Group(NAME, "status", ROUTES)
