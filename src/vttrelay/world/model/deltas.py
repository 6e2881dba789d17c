"""Unlinked tokens' actors: the base actor plus the token's `delta` (the tabletop's ActorDelta).

A token whose `actorLink` is false does not share its actor: it has a synthetic actor, built
from the world actor and the changes kept in the token's `delta`. Everything that reads the
token's actor sees `synthetic_actor(base, delta)`; everything that changes it changes that
synthetic actor and then stores `delta_between(base, synthetic)` as the token's new delta, so the
world actor and the other tokens of the same actor are untouched.

The delta holds what differs from the base, as Foundry's ActorDelta does: top-level fields
(`name`, `img`, `flags`, `ownership`, ...) and nested changes of `system` (objects merged key by
key; a key the synthetic actor lost is `-=key`); `items` and `effects` hold whole embedded
documents that are new or differ from the base's of the same id, and `{_id, _tombstone: true}`
for those the synthetic actor no longer has. Pure functions over plain data.
"""

from __future__ import annotations

import copy
from typing import Any, Final

EMBEDDED_KEYS: Final = ("items", "effects")
# Fields a delta never carries: the actor's identity, bookkeeping and the embedded collections
# (handled by id, below).
FIXED_KEYS: Final = frozenset({"_id", "_stats", "prototypeToken", "folder", "sort", "type"})
TOMBSTONE: Final = "_tombstone"


def _merge(base: Any, change: Any) -> Any:
    """`change` laid over `base`: objects merge key by key (`-=key` deletes), anything else
    replaces."""
    if not isinstance(base, dict) or not isinstance(change, dict):
        return copy.deepcopy(change)
    out = dict(base)
    for key, value in change.items():
        if key.startswith("-="):
            out.pop(key[2:], None)
        else:
            out[key] = _merge(base.get(key), value)
    return out


def _diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What laid over `before` with `_merge` gives `after`."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        if key not in before:
            out[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(before[key], dict):
            inner = _diff(before[key], value)
            if inner:
                out[key] = inner
        elif before[key] != value:
            out[key] = copy.deepcopy(value)
    for key in before:
        if key not in after:
            out[f"-={key}"] = None
    return out


def _by_id(docs: Any) -> dict[str, dict[str, Any]]:
    return {
        d["_id"]: d for d in docs or () if isinstance(d, dict) and isinstance(d.get("_id"), str)
    }


def synthetic_actor(base: dict[str, Any], delta: dict[str, Any] | None) -> dict[str, Any]:
    """The token's actor: a copy of `base` with `delta` applied (the base is untouched)."""
    out = copy.deepcopy(base)
    for key, value in (delta or {}).items():
        if key in FIXED_KEYS or key in EMBEDDED_KEYS or value is None:
            continue
        out[key] = _merge(out.get(key), value)
    for key in EMBEDDED_KEYS:
        changed = _by_id((delta or {}).get(key))
        if not changed:
            continue
        docs = []
        for doc in out.get(key) or []:
            own = changed.pop(str(doc.get("_id")), None) if isinstance(doc, dict) else None
            if own is None:
                docs.append(doc)
            elif not own.get(TOMBSTONE):
                docs.append(copy.deepcopy(own))
        docs += [copy.deepcopy(d) for d in changed.values() if not d.get(TOMBSTONE)]
        out[key] = docs
    return out


def delta_between(base: dict[str, Any], synthetic: dict[str, Any]) -> dict[str, Any]:
    """The delta that makes `synthetic` out of `base` (see the module docstring)."""
    delta: dict[str, Any] = {}
    for key, value in synthetic.items():
        if key in FIXED_KEYS or key in EMBEDDED_KEYS:
            continue
        before = base.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            inner = _diff(before, value)
            if inner:
                delta[key] = inner
        elif key not in base or before != value:
            delta[key] = copy.deepcopy(value)
    for key in EMBEDDED_KEYS:
        old, new = _by_id(base.get(key)), _by_id(synthetic.get(key))
        own = [copy.deepcopy(d) for i, d in new.items() if old.get(i) != d]
        own += [{"_id": i, TOMBSTONE: True} for i in old if i not in new]
        if own:
            delta[key] = own
    return delta
