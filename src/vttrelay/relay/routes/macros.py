"""The macro routes: list and execute the world's macros."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import B, P, forward
from vttrelay.relay.routes.model import Group, Param, Sdk

NAME: Final = "Macros"

ROUTES: Final = (
    forward(
        "GET",
        "/macros",
        "macros",
        "The world's macros (what the user may see).",
        NAME,
        scope="macro:list",
        sdk=Sdk("list", "MacrosReply"),
    ),
    forward(
        "POST",
        "/macro/{uuid}/execute",
        "macro-execute",
        "Execute a macro (off unless the world enables allowMacroExecute).",
        NAME,
        Param("uuid", "string", P, required=True, description="Macro uuid, `Macro.<id>`."),
        Param("args", "object", B, description="Arguments the macro sees as `args`."),
        scope="macro:execute",
        sdk=Sdk("execute", "MacroExecuted"),
    ),
)

GROUP: Final = Group(NAME, "macros", ROUTES)
