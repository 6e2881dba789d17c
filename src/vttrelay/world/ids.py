"""Document ids shaped like the tabletop's: 16 characters from [A-Za-z0-9]."""

from __future__ import annotations

import secrets
import string
from typing import Final

ID_ALPHABET: Final = string.ascii_letters + string.digits
ID_LENGTH: Final = 16


def new_id() -> str:
    """A fresh random 16-character id."""
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
