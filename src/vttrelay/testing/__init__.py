"""vttrelay's pytest plugin: test your bot, agent or module against a real relay and a real
embedded D&D 5e world (docs/testing.md).

Installed with vttrelay (entry point `pytest11`), so `pip install vttrelay` is all a suite
needs. Fixtures:

- `vttrelay` -> `VttRelay`: the relay of this test session (`url`, `api_key` with every scope,
  `client_id`, `seed`, `client()`, `async_client()`, `headers`), its world reset before the
  test to the fresh demo world (its dice and clock at their start too): each test sees the same
  world, whatever ran before it.
- `vttrelay_session` -> the same relay without the reset (for session-scoped fixtures).

The relay starts once per session (per xdist worker), in the test process on a thread of its
own (`harness.py` says why), on a free port of 127.0.0.1, with a new data dir. Its world is
seeded: `--vttrelay-seed N` (or the ini option `vttrelay_seed`, or `$VTTRELAY_SEED`) picks the
seed, else one is drawn and the end of the run says which, so a failure can be replayed.

This module stays light: a pytest run that uses none of its fixtures imports neither the relay
nor the world nor the client (`tests/e2e/testing/test_plugin.py` checks it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

import pytest

from vttrelay.testing.handle import VttRelay

__all__ = ["VttRelay"]

SEED_OPTION: Final = "--vttrelay-seed"
SEED_INI: Final = "vttrelay_seed"
SEED_ENV: Final = "VTTRELAY_SEED"
SEED_MAX: Final = 2**63 - 1
_SEED_USED = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vttrelay", "vttrelay relay and world (fixture vttrelay)")
    group.addoption(
        SEED_OPTION,
        default=None,
        metavar="N",
        help=f"seed of the embedded world's dice, ids and clock (default: ini {SEED_INI}, "
        f"${SEED_ENV}, else a random one, reported at the end)",
    )
    parser.addini(SEED_INI, "seed of vttrelay's embedded world (see --vttrelay-seed)")


def pytest_configure(config: pytest.Config) -> None:
    # the dice library's parser (lark, under d20) imports modules Python deprecates: not the
    # suite's business
    config.addinivalue_line("filterwarnings", "ignore:module 'sre_:DeprecationWarning")


def _seed(config: pytest.Config) -> int:
    """The seed asked for (option, ini, environment), else a random one."""
    option: str | None = config.getoption(SEED_OPTION)
    ini: str = config.getini(SEED_INI) or ""
    text = (option if option is not None else ini or os.environ.get(SEED_ENV, "")).strip()
    if not text:
        import secrets

        return secrets.randbelow(2**32)
    if not text.isdigit() or int(text) > SEED_MAX:
        raise pytest.UsageError(
            f"vttrelay: a seed is a whole number from 0 to {SEED_MAX}: {text!r}"
        )
    return int(text)


@pytest.fixture(scope="session")
def vttrelay_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VttRelay]:
    """The session's relay and world (started on first use, stopped at the end); no reset."""
    from vttrelay.testing.harness import Harness

    seed = _seed(request.config)
    request.config.stash[_SEED_USED] = seed
    harness = Harness(tmp_path_factory.mktemp("vttrelay"), seed)
    try:
        yield harness.start()
    finally:
        harness.stop()


@pytest.fixture
def vttrelay(vttrelay_session: VttRelay) -> VttRelay:
    """The session's relay, its world reset to the fresh demo world before this test."""
    vttrelay_session.reset()
    return vttrelay_session


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    seed = config.stash.get(_SEED_USED, None)
    if seed is not None:
        terminalreporter.write_line(
            f"vttrelay: world seed {seed} (repeat these rolls with {SEED_OPTION} {seed})"
        )
