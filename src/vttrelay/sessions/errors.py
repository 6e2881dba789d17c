"""The sessions package's one error shape: a refusal with the HTTP status and text to answer."""

from __future__ import annotations


class Refused(Exception):
    """A refused session request: the HTTP status and the text the caller gets."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text
