"""The reference's password and email rules (accounts-auth.md §4.1, §4.2), as pure functions.

Differences, deliberate: an email is stored as its bare address, lower-cased (the reference
stores the raw string and matches it case-sensitively, §14 Q8), and both a password and an email
have a maximum length (the reference has none; bcrypt cuts at 72 bytes, argon2 does not).
"""

from __future__ import annotations

from collections.abc import Collection
from email.utils import parseaddr
from typing import Final

MIN_PASSWORD: Final = 8  # bytes of UTF-8
MAX_PASSWORD: Final = 1024  # bytes of UTF-8
MAX_EMAIL: Final = 254  # RFC 5321's longest path
INVALID_EMAIL: Final = "Invalid email address."
BLOCKED_EMAIL: Final = "This email domain is not allowed."

# The reference's built-in list of disposable domains (accounts-auth.md §4.2): 108 names.
DISPOSABLE_DOMAINS: Final = frozenset(
    (
        "mailinator.com",
        "guerrillamail.com",
        "guerrillamail.net",
        "guerrillamail.org",
        "guerrillamail.biz",
        "guerrillamail.de",
        "guerrillamail.info",
        "guerrillamailblock.com",
        "grr.la",
        "sharklasers.com",
        "spam4.me",
        "tempmail.com",
        "temp-mail.org",
        "10minutemail.com",
        "10minutemail.net",
        "throwam.com",
        "throwaway.email",
        "trashmail.com",
        "trashmail.me",
        "trashmail.net",
        "trashmail.at",
        "trashmail.io",
        "dispostable.com",
        "maildrop.cc",
        "mailnesia.com",
        "mailnull.com",
        "discard.email",
        "mailsac.com",
        "yopmail.com",
        "yopmail.fr",
        "cool.fr.nf",
        "jetable.fr.nf",
        "jetable.com",
        "jetable.net",
        "jetable.org",
        "nospam.ze.tc",
        "nomail.xl.cx",
        "nomail.pw",
        "nospamfor.us",
        "mega.zik.dj",
        "speed.1s.fr",
        "courriel.fr.nf",
        "moncourrier.fr.nf",
        "monemail.fr.nf",
        "monmail.fr.nf",
        "spamgourmet.com",
        "spamgourmet.net",
        "spamgourmet.org",
        "spamspot.com",
        "spamevader.com",
        "spamcorner.com",
        "spamcero.com",
        "spamcon.org",
        "spamfree24.org",
        "spamgob.com",
        "spaml.com",
        "spamoff.de",
        "spamthis.co.uk",
        "spamtrap.ro",
        "spamboy.com",
        "spam.la",
        "spamfighter.cf",
        "spamfighter.ga",
        "spamfighter.gq",
        "spamfighter.ml",
        "spamfighter.tk",
        "tradermail.info",
        "objectmail.com",
        "rklips.com",
        "getonemail.net",
        "mailfreeonline.com",
        "mailguard.me",
        "mail-temporaire.fr",
        "tempr.email",
        "tempe.email",
        "tmail.com",
        "tmail.io",
        "mohmal.com",
        "mailtemp.info",
        "burnermail.io",
        "getairmail.com",
        "fakeinbox.com",
        "inboxbear.com",
        "tempinbox.com",
        "emailondeck.com",
        "filzmail.com",
        "einrot.com",
        "tempomail.fr",
        "owlpic.com",
        "inemail.com",
        "inoutmail.de",
        "inoutmail.eu",
        "inoutmail.info",
        "inoutmail.net",
        "lroid.com",
        "mailboxy.fun",
        "mailscrap.com",
        "mailslapping.com",
        "mailslite.com",
        "mailsiphon.com",
        "sogetthis.com",
        "soodonims.com",
        "superrito.com",
        "tempalias.com",
        "tempail.com",
        "tempem.com",
        "tempsky.com",
        "wibblesmith.com",
    )
)


def password_problem(password: str) -> str | None:
    """The first rule `password` breaks, as the reference words it, or None."""
    size = len(password.encode())
    if size < MIN_PASSWORD:
        return "Password must be at least 8 characters long"
    if size > MAX_PASSWORD:
        return f"Password must be at most {MAX_PASSWORD} bytes long"
    if not any("A" <= c <= "Z" for c in password):
        return "Password must contain at least one uppercase letter"
    if not any("a" <= c <= "z" for c in password):
        return "Password must contain at least one lowercase letter"
    if not any("0" <= c <= "9" for c in password):
        return "Password must contain at least one number"
    return None


def bare_email(text: str) -> str | None:
    """The bare address of `text` (`Bob <Bob@Example.com>` -> `bob@example.com`), or None when
    it is not one: one `@`, a non-empty local part, a domain with a dot, no spaces or controls."""
    if len(text) > 2 * MAX_EMAIL or "," in text:  # one address, not a list
        return None
    _, address = parseaddr(text)
    address = address.strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or "@" in local or len(address) > MAX_EMAIL:
        return None
    if "." not in domain or domain.startswith(".") or domain.endswith(".") or ".." in domain:
        return None
    if any(c.isspace() or ord(c) < 32 or c in '<>()[]\\,;:"' for c in domain + local):
        return None
    return address


def email_problem(text: str, blocked: Collection[str] = ()) -> tuple[str | None, str]:
    """`(problem, address)`: the reference's 400 text for a sign-up address (None when it is
    fine) and the address to store."""
    address = bare_email(text)
    if address is None:
        return INVALID_EMAIL, ""
    domain = address.rpartition("@")[2]
    if domain in DISPOSABLE_DOMAINS or domain in blocked:
        return BLOCKED_EMAIL, address
    return None, address
