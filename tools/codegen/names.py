"""How route table facts become Python names and annotations in the SDK."""

from __future__ import annotations

import keyword
import re
from typing import Final

from vttrelay.relay.routes import Param, ParamType, Route

# The Python type of each JSON type, where the parameter declares no narrower `sdk_type`.
PY_TYPES: Final[dict[ParamType | None, str]] = {
    "string": "str",
    "number": "float",
    "integer": "int",
    "boolean": "bool",
    "array": "Sequence[Json]",
    "object": "Mapping[str, Json]",
    None: "Json",
}

# Names an annotation may use that are not `vttrelay.client.types` names.
NOT_SHAPES: Final = frozenset(
    {
        "AsyncGenerator",
        "Generator",
        "Mapping",
        "Sequence",
        "None",
        "bool",
        "bytes",
        "dict",
        "float",
        "int",
        "str",
    }
)


def snake(name: str) -> str:
    """`actorUuid` -> `actor_uuid`, `autoHDThreshold` -> `auto_hd_threshold`, `rollNPC` ->
    `roll_npc`, `skill-check` -> `skill_check`, `from` -> `from_`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = name.replace("-", "_").lower()
    return f"{name}_" if keyword.iskeyword(name) else name


def plain_path(path: str) -> str:
    """aiohttp's `{name:regex}` placeholders written `{name}`."""
    return re.sub(r"\{(\w+):[^}]*\}", r"{\1}", path)


def class_name(attr: str) -> str:
    """`dnd5e` -> `Dnd5e`, `world_info` -> `WorldInfo`."""
    return "".join(part.capitalize() for part in attr.split("_"))


def qualified(annotation: str) -> str:
    """The names of `vttrelay.client.types` in an annotation written `shapes.<name>`: a group
    class may have the name of a shape (`Playlists`)."""
    return re.sub(
        r"[A-Za-z_]\w*",
        lambda m: m.group(0) if m.group(0) in NOT_SHAPES else f"shapes.{m.group(0)}",
        annotation,
    )


def param_type(param: Param, qualify: bool = True) -> str:
    """The parameter's annotation (qualified for the generated code, or as the docs write it)."""
    annotation = param.sdk_type or PY_TYPES[param.type]
    return qualified(annotation) if qualify else annotation


def route_key(route: Route) -> str:
    """`METHOD /path` with plain placeholders: how the SDK names a route."""
    return f"{route.method} {plain_path(route.path)}"
