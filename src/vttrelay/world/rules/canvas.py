"""Rules for the documents a scene holds (tokens, tiles, drawings, walls, lights, sounds, notes,
templates, regions): what makes one valid, and what a token dropped from an actor takes from the
actor's prototype token. Pure functions; errors use the tabletop's validation-error form
(`Wall validation errors:\\n  c: ...`).

Bounds: every number is finite and at most `MAX_NUMBER` in size (a wall's coordinates too); the
radii the scene picture draws (a light's `config.dim` and `config.bright`, a sound's `radius`, a
template's `distance`) lie from 0 to `MAX_RADIUS` scene units; one call creates or deletes at
most `MAX_BATCH` documents, and a scene holds at most `rules.bounds.MAX_EMBEDDED` of each type.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from vttrelay.world.rules.paths import get_path

MAX_BATCH: Final = 10_000  # documents one canvas call creates or deletes
MAX_NUMBER: Final = 10_000_000  # size of any number of a scene document (pixels, cells, degrees)
MAX_RADIUS: Final = 100_000  # scene units (feet on a 5-ft grid) of a drawn radius
# Radii, by document type: dotted paths of numbers from 0 to MAX_RADIUS when present.
RADII: Final[dict[str, tuple[str, ...]]] = {
    "AmbientLight": ("config.dim", "config.bright"),
    "AmbientSound": ("radius",),
    "MeasuredTemplate": ("distance",),
}
# Fields that must be finite numbers when present, on every scene document but where
# OBJECT_FIELDS says otherwise (a region's elevation is `{bottom, top}`).
NUMBER_FIELDS: Final = ("x", "y", "elevation", "rotation", "width", "height", "sort")
OBJECT_FIELDS: Final = {"Region": ("elevation",)}
# Fields with a fixed set of values, per document type.
CHOICES: Final[dict[str, dict[str, tuple[Any, ...]]]] = {
    "MeasuredTemplate": {"t": ("circle", "cone", "rect", "ray")},
    "Wall": {"door": (0, 1, 2), "ds": (0, 1, 2), "dir": (0, 1, 2)},
    "Token": {"disposition": (-2, -1, 0, 1)},
}
# What a new token takes from its actor's prototype token unless the caller gives it.
PROTOTYPE_FIELDS: Final = (
    "name",
    "displayName",
    "actorLink",
    "width",
    "height",
    "texture",
    "disposition",
    "displayBars",
    "bar1",
    "bar2",
    "sight",
)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def bounded(value: Any) -> bool:
    """True for a finite number at most `MAX_NUMBER` in size (what every scene number is)."""
    return _finite(value) and abs(value) <= MAX_NUMBER


def validation_error(document_name: str, doc: dict[str, Any]) -> str | None:
    """The tabletop's validation error for this document, or None if it is valid."""
    problems: list[str] = []
    for name in NUMBER_FIELDS:
        if name in OBJECT_FIELDS.get(document_name, ()):
            if not isinstance(doc.get(name), dict):
                problems.append(f"{name}: must be an object")
        elif name in doc and doc[name] is not None and not _finite(doc[name]):
            problems.append(f"{name}: must be a finite number")
        elif name in doc and doc[name] is not None and not bounded(doc[name]):
            problems.append(f"{name}: must be between -{MAX_NUMBER} and {MAX_NUMBER}")
    for path in RADII.get(document_name, ()):
        radius = get_path(doc, path)
        if radius is not None and not (_finite(radius) and 0 <= radius <= MAX_RADIUS):
            problems.append(f"{path}: must be a number from 0 to {MAX_RADIUS}")
    if document_name == "Wall":
        coords = doc.get("c")
        if coords is None:
            problems.append("c: may not be undefined")
        elif not (isinstance(coords, list) and len(coords) == 4 and all(map(_finite, coords))):
            problems.append("c: must be an array of 4 numbers")
        elif not all(map(bounded, coords)):
            problems.append(f"c: each coordinate must be between -{MAX_NUMBER} and {MAX_NUMBER}")
    if document_name in ("Token", "Tile") and any(
        _finite(doc.get(n)) and doc[n] < 0 for n in ("width", "height")
    ):
        problems.append("width, height: may not be negative")
    for name, allowed in CHOICES.get(document_name, {}).items():
        if name in doc and doc[name] not in allowed:
            problems.append(f"{name}: {doc[name]!r} is not a valid choice")
    if not problems:
        return None
    return f"{document_name} validation errors:\n  " + "\n  ".join(problems)


def scene_error(scene: dict[str, Any], classes: dict[str, str]) -> str | None:
    """The first validation error of the documents a scene holds (`classes`: class name ->
    the scene's key, `documents.EMBEDDED["Scene"]`), or None: what a scene written whole
    (POST/PUT /scene, /create, /update) must pass, as each document written alone does."""
    for class_name, key in classes.items():
        entries = scene.get(key)
        for doc in entries if isinstance(entries, list) else ():
            problem = validation_error(class_name, doc) if isinstance(doc, dict) else None
            if problem is not None:
                return problem
    return None


def token_data_from_actor(actor: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Create data for a token of `actor`: the prototype token's fields under the caller's; an
    unlinked token gets an empty `delta`."""
    prototype = actor.get("prototypeToken")
    prototype = prototype if isinstance(prototype, dict) else {}
    out = {k: prototype[k] for k in PROTOTYPE_FIELDS if k in prototype}
    out.setdefault("name", actor.get("name", ""))
    out = {**out, **data}
    if not out.get("actorLink") and out.get("delta") is None:
        out["delta"] = {}  # an unlinked token keeps its own changes to the actor here
    return out


def numbered_names(names: Sequence[str]) -> list[str]:
    """The names tokens go by, in scene order: a name that several tokens share is numbered
    ("Goblin 1", "Goblin 2", compared without case), a name of its own is kept. One rule for the
    scene picture's labels, the MCP tools' handles and the dashboard's world page."""
    counts = Counter(name.casefold() for name in names)
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        key = name.casefold()
        seen[key] += 1
        out.append(f"{name} {seen[key]}" if name and counts[key] > 1 else name)
    return out
