"""Readable lines for the events a world sends: what a game master reads in the world page's feed
and in Live events ("Pip Tealeaf — Stealth 22", "Brann Stoneheart misses Goblin (AC 15)"),
instead of the raw JSON (which stays one click away). Plain functions over the event's name and
data, as the relay's event streams carry them (`relay/events/model.unwrap`); no I/O.

A chat message's text is its HTML content as text (tags dropped, at most `MAX_TEXT`
characters); the hit/miss notes of an attack card are its list items, as the world writes
them ("misses Goblin (AC 15)"), each said with the speaker's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Any, Final

MAX_TEXT: Final = 500  # characters of a message's text in a line
MAX_NOTES: Final = 8  # outcome lines of one card
MAX_NAME: Final = 200  # characters of an actor's name in a line
CHECK_WORDS: Final = (" Skill Check", " Ability Check", " Saving Throw")


@dataclass(frozen=True)
class Line:
    """One event as the feed shows it: who, what, and for a roll its formula and total;
    `notes` are the outcomes the world wrote (hits and misses), each a sentence."""

    kind: str  # "chat", "roll", "combat", "actor", "scene", "other"
    text: str
    speaker: str = ""
    formula: str = ""
    total: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "speaker": self.speaker,
            "formula": self.formula,
            "total": self.total,
            "notes": list(self.notes),
        }


class _Text(HTMLParser):
    """The text of an HTML fragment, and the text of each of its list items."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.items: list[str] = []
        self._item: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "li":
            self._item = []
        elif tag in ("br", "p", "div", "h3", "h4", "ul"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "li" and self._item is not None:
            self.items.append(_squash("".join(self._item)))
            self._item = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.parts.append(data)
        if self._item is not None:
            self._item.append(data)


def _squash(text: str) -> str:
    return " ".join(text.split())[:MAX_TEXT]


def html_text(content: str) -> tuple[str, list[str]]:
    """The text of a chat message's HTML content, and its list items' texts."""
    parser = _Text()
    parser.feed(content[: MAX_TEXT * 20])
    parser.close()
    return _squash("".join(parser.parts)), [i for i in parser.items if i][:MAX_NOTES]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def speaker_of(message: Mapping[str, Any]) -> str:
    """Who speaks: the speaker's alias, else the author's name."""
    speaker = message.get("speaker")
    alias = _str(speaker.get("alias")) if isinstance(speaker, dict) else ""
    author = message.get("author") if isinstance(message.get("author"), dict) else None
    user = message.get("user") if isinstance(message.get("user"), dict) else None
    return alias or _str((author or user or {}).get("name"))


def check_name(flavor: str) -> str:
    """`Stealth Skill Check` -> `Stealth`: the roll's name without the words every check has."""
    for words in CHECK_WORDS:
        if flavor.endswith(words) and len(flavor) > len(words):
            return flavor[: -len(words)]
    return flavor


def _outcome(speaker: str, note: str) -> str:
    """A card's note as a sentence: `misses Goblin (AC 15)` said by Brann -> `Brann misses
    Goblin (AC 15)`; a note that already names someone stays as written."""
    first = note.split(" ", 1)[0].lower()
    if speaker and first in ("hits", "misses", "crits", "fumbles", "critically"):
        return f"{speaker} {note}"
    return note


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def chat_line(message: Mapping[str, Any]) -> Line:
    """A chat message (a roll card too) as a line."""
    speaker = speaker_of(message)
    text, items = html_text(_str(message.get("content")))
    flavor = _str(message.get("flavor")).strip()
    rolls = message.get("rolls")
    roll = rolls[0] if isinstance(rolls, list) and rolls and isinstance(rolls[0], dict) else None
    if roll is None:
        return Line("chat", text, speaker)
    # a check names itself in its flavor; an item card in its heading
    title = check_name(flavor) if flavor else _card_title(_str(message.get("content")))
    notes = tuple(_outcome(speaker, n) for n in items)
    return Line(
        "roll",
        title or "Roll",
        speaker,
        _str(roll.get("formula")),
        _number(roll.get("total")),
        notes,
    )


def _card_title(content: str) -> str:
    """The heading of a chat card (`<h3>Longsword</h3>`), or ""."""
    start = content.find("<h3>")
    end = content.find("</h3>", start)
    if start < 0 or end < 0:
        return ""
    return html_text(content[start + 4 : end])[0]


def roll_line(data: Mapping[str, Any]) -> Line:
    """A roll event (`roll`) as a line."""
    flavor = check_name(_str(data.get("flavor")).strip())
    return Line(
        "roll",
        flavor or "Roll",
        speaker_of(data),
        _str(data.get("formula")),
        _number(data.get("rollTotal")),
    )


def combat_line(name: str, data: Mapping[str, Any]) -> Line:
    """A combat event as a line: whose turn it is, who joined, started, ended."""
    kind = name.removeprefix("combat-")
    combatants = data.get("combatants")
    turn = data.get("turn")
    if kind in ("turn", "round", "update") and isinstance(combatants, list):
        current = (
            combatants[turn] if isinstance(turn, int) and 0 <= turn < len(combatants) else None
        )
        who = _str(current.get("name")) if isinstance(current, dict) else ""
        round_ = _number(data.get("round"))
        text = f"Round {round_}" + (f": {who}'s turn" if who else "")
        return Line("combat", text)
    combatant = data.get("combatant")
    who = _str(combatant.get("name")) if isinstance(combatant, dict) else ""
    texts = {
        "start": "An encounter starts",
        "end": "The encounter ends",
        "delete": "The encounter ends",
        "combatant-add": f"{who} joins the encounter",
        "combatant-remove": f"{who} leaves the encounter",
        "combatant-update": f"{who} changes",
    }
    return Line("combat", texts.get(kind, f"Encounter: {kind}"))


def actor_line(name: str, data: Mapping[str, Any]) -> Line:
    """An actor event as a line: the actor by the name the event carries (`actorName`), by its
    uuid only when it has none."""
    kind = name.removeprefix("actor-")
    actor = _str(data.get("actorName")).strip()[:MAX_NAME] or _str(data.get("actorUuid"))
    effect = data.get("effect")
    effect_name = _str(effect.get("name")) if isinstance(effect, dict) else ""
    changes = data.get("changes")
    hp = None
    if isinstance(changes, dict):
        system = changes.get("system")
        attrs = system.get("attributes") if isinstance(system, dict) else None
        hp_changes = attrs.get("hp") if isinstance(attrs, dict) else None
        hp = hp_changes.get("value") if isinstance(hp_changes, dict) else None
    if kind == "effect-add" and effect_name:
        return Line("actor", f"{actor}: {effect_name} added")
    if kind == "effect-remove" and effect_name:
        return Line("actor", f"{actor}: {effect_name} removed")
    if hp is not None and _number(hp):
        return Line("actor", f"{actor}: HP {_number(hp)}")
    return Line("actor", f"{actor}: {kind}")


def describe(name: str, data: Any) -> Line:
    """The readable line of an event of any channel (`name` as the streams send it)."""
    data = data if isinstance(data, dict) else {}
    if name in ("chat-create", "chat-update"):
        line = chat_line(data)
        return line if name == "chat-create" else replace(line, text=line.text + " (edited)")
    if name == "chat-delete":
        return Line("chat", "A message was deleted")
    if name == "roll":
        return roll_line(data)
    if name.startswith("combat-"):
        return combat_line(name, data)
    if name.startswith("actor-"):
        return actor_line(name, data)
    if name.startswith("scene-"):
        scene = _str(data.get("name")) or _str(data.get("sceneId"))
        return Line("scene", f"Scene {scene}: {name.removeprefix('scene-')}".replace("  ", " "))
    return Line("other", name)
