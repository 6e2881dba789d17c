"""When a key expires, as an operator writes it: a duration from now or a date (the CLI's
`--expires` and the dashboard's key form read it the same way)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_expiry(text: str, now: float | None = None) -> float:
    """`30d`, `12h`, `15m`, `90s`, `2w` from now, or an ISO 8601 date/time (UTC if naive), as a
    Unix time; ValueError for anything else."""
    now = time.time() if now is None else now
    match = _DURATION.match(text.strip().lower())
    if match:
        return now + float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a duration (30d, 12h, 15m) or an ISO date/time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
