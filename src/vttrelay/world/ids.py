"""Document ids shaped like the tabletop's: 16 characters from [A-Za-z0-9]."""

from __future__ import annotations

import re
import secrets
import string
from typing import Final

ID_ALPHABET: Final = string.ascii_letters + string.digits
ID_LENGTH: Final = 16
_ID_RE: Final = re.compile(r"[A-Za-z0-9]{16}")


def new_id() -> str:
    """A fresh random 16-character id."""
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def is_valid_id(value: object) -> bool:
    """True if `value` is a string shaped like a document id."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None
