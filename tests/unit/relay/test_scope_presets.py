"""The scope presets of the route table (`routes.SCOPE_PRESETS`): known scopes only, "all" is
every routed scope, "gm" holds what the README's recipes and the demo key need."""

from __future__ import annotations

from vttrelay.dashboard.scopes import routes_by_scope, scope_groups
from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES, GM_SCOPES, SCOPE_PRESETS, scope_preset
from vttrelay.server.prepare import SERVE_SCOPES


def test_presets_name_known_scopes_once() -> None:
    assert [p.name for p in SCOPE_PRESETS] == ["default", "gm", "all"]
    for preset in SCOPE_PRESETS:
        assert set(preset.scopes) <= set(ALL_SCOPES) and len(set(preset.scopes)) == len(
            preset.scopes
        )
        assert scope_preset(preset.name) is preset and preset.help and preset.title
    assert scope_preset("boss") is None


def test_all_is_every_routed_scope_and_gm_every_one_but_sessions() -> None:
    assert scope_preset("all").scopes == ALL_SCOPES  # type: ignore[union-attr]
    assert set(routes_by_scope()) == set(ALL_SCOPES)
    assert scope_preset("default").scopes == DEFAULT_SCOPES  # type: ignore[union-attr]
    assert set(ALL_SCOPES) - set(GM_SCOPES) == {"session:manage"}
    assert set(SERVE_SCOPES) <= set(GM_SCOPES)
    for needed in ("scene:write", "encounter:manage", "entity:write", "canvas:write"):
        assert needed in GM_SCOPES


def test_the_key_form_marks_each_scope_with_its_presets() -> None:
    for group in scope_groups():
        for info in group.scopes:
            assert info.presets == tuple(p.name for p in SCOPE_PRESETS if info.name in p.scopes)
            assert ("default" in info.presets) == info.default
