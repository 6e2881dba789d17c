"""The README's MCP session is what a run answers (issue 24): `tools.mcp_transcript` plays it
again against `vttrelay serve --seed 7` (a process of its own, its demo key) through the `mcp`
SDK's client over stdio, and the README's block must be that transcript, verbatim. A change
of any reply shows here; `python -m tools.mcp_transcript --write` records it again."""

from __future__ import annotations

from tools.mcp_transcript import MARKER, README, record, with_transcript


async def test_the_readme_shows_what_the_session_answers() -> None:
    transcript = await record()
    # what the session shows: the fight's replies say what happened
    assert '"current":' in transcript and '"started":true' in transcript
    assert ": hit. " in transcript and ": miss. no damage." in transcript
    assert "Elara Quill uses Burning Hands on Goblin 1, Goblin 2. DEX save DC 13." in transcript
    readme = README.read_text()
    assert MARKER in readme
    assert with_transcript(readme, transcript) == readme, (
        "README.md's MCP transcript is not what a run answers: "
        "run `python -m tools.mcp_transcript --write`"
    )
