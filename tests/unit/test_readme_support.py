"""The README runner's reading of blocks and its shape check (tests/support/readme.py): it must
refuse what differs, or running every README command would prove nothing."""

from __future__ import annotations

from tests.support.readme import learned_ids, matches, shell_blocks

README = """Intro.

<!-- readme-test: not run: needs a real Foundry server -->
```bash
foundry --start
```

```console
$ curl -s -w ' %{http_code}\\n' -H "x-api-key: $KEY" \\
    http://127.0.0.1:3010/chat
{"error":"'skill' is required"} 400
$ vttrelay keys list
ID                NAME
key_2b965cb32870  serve
```

```python
print("not a shell block")
```
"""


def test_blocks_commands_outputs_and_markers() -> None:
    first, second = shell_blocks(README)
    assert (first.line, first.lang, first.marker) == (
        4,
        "bash",
        "not run: needs a real Foundry server",
    )
    assert [c.text for c in first.commands] == ["foundry --start"]
    assert second.marker == "" and len(second.commands) == 2
    curl, keys = second.commands
    assert curl.text.endswith("\\\n    http://127.0.0.1:3010/chat")
    assert curl.output == ['{"error":"\'skill\' is required"} 400']
    assert keys.output == ["ID                NAME", "key_2b965cb32870  serve"]


def test_json_lines_must_have_the_same_keys_error_type_and_status() -> None:
    shown = ['{"type":"roll-result","requestId":"roll_2_8d","data":{"total":13}} 200']
    assert not matches(shown, ['{"type":"roll-result","requestId":"roll_7_aa","data":{"x":1}} 200'])
    assert matches(shown, ['{"type":"roll-result","requestId":"r","data":{}} 400'])
    assert matches(shown, ['{"type":"chat-result","requestId":"r","data":{}} 200'])
    assert matches(shown, ['{"type":"roll-result","requestId":"r","data":{},"error":"x"} 200'])
    assert matches(shown, ["Internal Server Error"])
    assert matches(['{"error":"API key lacks required scope: chat:read"}'], ['{"error":"nope"}'])


def test_text_lines_take_other_ids_dates_and_numbers_but_not_other_words() -> None:
    shown = ["key_2b965cb32870  default  serve  active  15  2026-11-24T06:40:00Z  a,...,z"]
    printed = [
        "ID  ACCOUNT",
        "key_66c433c65203  default  serve  active  5  2026-11-27T07:00:01Z  a,b,c,z",
    ]
    assert not matches(shown, printed)
    assert matches(shown, ["key_66c433c65203  other  serve  active  5  2026-11-27T07:00:01Z  a,z"])
    assert matches(
        shown, ["key_66c433c65203  default  serve  revoked  5  2026-11-27T07:00:01Z  a,z"]
    )
    assert matches(["a", "b"], ["b", "a"])  # in order


def test_ids_shown_map_to_the_ones_printed() -> None:
    shown = ['{"code":"D3HXC8","expiresIn":600}', "fvtt_442b268633405913"]
    printed = [
        "2026-11-27 07:17:06 INFO noise",
        '{"code":"MCXCEY","expiresIn":600}',
        "fvtt_b1db8ef56db4153f",
    ]
    assert learned_ids(shown, printed) == {
        "D3HXC8": "MCXCEY",
        "fvtt_442b268633405913": "fvtt_b1db8ef56db4153f",
    }
