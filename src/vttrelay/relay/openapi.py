"""The OpenAPI 3.1 document and the `/docs` page, both generated from `routes.ROUTES`.

Each route becomes one operation: its scope is a security requirement (and `x-scope`), each
parameter appears with its sources (query and path parameters; body parameters as the JSON
request body schema), defaults and required flags come from the table. `/docs` is a small
self-contained page (no external assets) that renders the document with a "try it" form.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import orjson

from vttrelay import __version__
from vttrelay.relay.params import body_limit
from vttrelay.relay.routes import MISSING, ROUTES, Param, Route

SECURITY_SCHEME = "ApiKeyAuth"
ERROR_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
ERROR_STATUSES = {
    "400": "Bad parameter, or the world replied with an error (its frame, byte for byte).",
    "401": "Missing, unknown, disabled or expired API key.",
    "403": "The key lacks the route's scope, or may not use this world.",
    "404": "No such connected world.",
    "408": "The world did not reply in time.",
    "413": "Request body, or one parameter, too large (its maxLength or x-max-bytes).",
    "429": "Too many requests for this key.",
    "503": "The world disconnected before replying.",
}


def _limits(param: Param) -> dict[str, Any]:
    """The parameter's declared limits as JSON Schema keywords (README "Limits"); the JSON size
    and nesting depth, which JSON Schema cannot say, as `x-max-bytes` and `x-max-depth`."""
    kind = param.type
    if kind in ("number", "integer"):
        return {"minimum": param.minimum, "maximum": param.maximum}
    limits: dict[str, Any] = {}
    if kind in ("string", None):
        limits["maxLength"] = param.max_length  # for an untyped value: when it is a string
    if kind in ("array", "object", None):
        limits["x-max-bytes"] = param.max_bytes
        limits["x-max-depth"] = param.max_depth
    return limits


def _schema(param: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": param.type} if param.type else {}
    schema.update(_limits(param))
    if param.default is not MISSING:
        schema["default"] = param.default
    description = param.description
    if param.aliases:
        names = ", ".join(f"`{a}`" for a in param.aliases)
        description = f"{description} Also accepted as {names}.".strip()
    if description:
        schema["description"] = description
    return schema


def _operation_id(route: Route) -> str:
    words = re.split(r"[^A-Za-z0-9]+", f"{route.method.lower()} {route.path}")
    first, *rest = [w for w in words if w]
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


def _parameters(route: Route) -> list[dict[str, Any]]:
    out = []
    for param in route.params:
        # GET bodies are never read, so on GET only the query and path sources count.
        sources = [s for s in param.sources if s != "body" or route.method != "GET"]
        for source in sources:
            if source == "body":
                continue
            entry: dict[str, Any] = {
                "name": param.name,
                "in": source,
                "required": source == "path" or (param.required and sources == [source]),
                "schema": _schema(param),
            }
            if param.description:
                entry["description"] = param.description
            if param.type in ("array", "object") and source == "query":
                entry["description"] = (param.description + " Sent as JSON text.").strip()
            if route.document_types is not None and param.name == "documentType":
                entry["schema"]["enum"] = list(route.document_types)
            entry["x-sources"] = sources
            out.append(entry)
    return out


def _request_body(route: Route) -> dict[str, Any] | None:
    if route.method == "GET":
        return None
    body_params = [p for p in route.params if "body" in p.sources]
    if not body_params:
        return None
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: _schema(p) for p in body_params},
    }
    required = [p.name for p in body_params if p.required and p.sources == ("body",)]
    if required:
        schema["required"] = required
    return {
        "required": bool(required),
        "content": {"application/json": {"schema": schema}},
        "x-max-bytes": body_limit(route),  # larger bodies: 413 (README "Limits")
    }


def _responses(route: Route) -> dict[str, Any]:
    declared = route.extra.get("responses")
    if declared:  # a local route that lists its own answers: {status: description}
        kind = route.extra.get("content_type", "application/json")
        schema: dict[str, Any] = {"type": "string"} if kind == "text/html" else {"type": "object"}
        if kind.startswith("image/"):
            schema = {"type": "string", "format": "binary"}
        answers = {
            status: {"description": text, "content": {kind: {"schema": schema}}}
            for status, text in declared.items()
        }
        if route.action:  # a local route that asks a world: its errors are a forward route's
            answers.update({s: _error(s) for s in ERROR_STATUSES if s not in answers})
        return answers
    if route.mode == "stream":
        return {
            "200": {
                "description": "A Server-Sent Events stream; `event: connected` first.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **{s: _error(s) for s in ("400", "401", "403", "404", "429")},
        }
    ok = {
        "200": {
            "description": "The world's reply frame, byte for byte."
            if route.mode == "forward"
            else "OK",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    }
    if route.mode == "forward":
        return {**ok, **{s: _error(s) for s in ERROR_STATUSES}}
    if route.scope or route.keyed:
        return {**ok, **{s: _error(s) for s in ("401", "403", "429")}}
    return ok


RETRY_AFTER: Final = {
    "Retry-After": {
        "description": "Whole seconds until the key may call again.",
        "schema": {"type": "integer"},
    }
}


def _error(status: str) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "description": ERROR_STATUSES[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if status == "429":
        answer["headers"] = RETRY_AFTER
    return answer


def operation(route: Route) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": _operation_id(route),
        "summary": route.summary,
        "tags": [route.group],
        "parameters": _parameters(route),
        "responses": _responses(route),
        "x-mode": route.mode,
    }
    body = _request_body(route)
    if body:
        op["requestBody"] = body
    if route.scope:
        op["security"] = [{SECURITY_SCHEME: [route.scope]}]
        op["x-scope"] = route.scope
    elif route.keyed:
        op["security"] = [{SECURITY_SCHEME: []}]
    else:
        op["security"] = []
    if route.action:
        op["x-action"] = route.action
        op["x-timeout"] = route.timeout
    if route.system:
        op["x-system"] = route.system
    if route.channel:
        op["x-channel"] = route.channel
    if route.require_any:
        op["x-require-any"] = list(route.require_any)
        op["description"] = "At least one of: " + ", ".join(route.require_any) + "."
    return op


def openapi_path(route: Route) -> str:
    """The route's path as OpenAPI writes it: aiohttp's `{name:regex}` becomes `{name}`."""
    return re.sub(r"\{(\w+):[^}]*\}", r"{\1}", route.path)


def build_document(routes: tuple[Route, ...] = ROUTES, base_path: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document of `routes`, served under `base_path` (`RelayConfig.base_path`:
    its one server is that path, relative to the document's own origin)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(openapi_path(route), {})[route.method.lower()] = operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "vttrelay",
            "version": __version__,
            "description": "REST relay for virtual tabletop worlds. Send your API key in the "
            "`x-api-key` header; each operation names the scope it needs (`x-scope`).",
        },
        "servers": [{"url": base_path or "/"}],
        "tags": [{"name": g} for g in dict.fromkeys(r.group for r in routes)],
        "paths": paths,
        "components": {
            "securitySchemes": {
                SECURITY_SCHEME: {"type": "apiKey", "in": "header", "name": "x-api-key"}
            },
            "schemas": {"Error": ERROR_SCHEMA},
        },
    }


@lru_cache(maxsize=4)
def document_bytes(base_path: str = "") -> bytes:
    return orjson.dumps(build_document(base_path=base_path))


DOCS_PAGE = Path(__file__).with_name("docs.html")


@lru_cache(maxsize=1)
def docs_html() -> str:
    """The `/docs` page: it renders `openapi.json` (beside it, so under the base path too) with a
    try-it form per endpoint that calls the document's server."""
    return DOCS_PAGE.read_text(encoding="utf-8")
