"""The client distribution (`clients/python`) copied out of the working tree, for tests that
build or install it: a build writes beside its sources, and the tree must stay clean."""

from __future__ import annotations

import shutil
from pathlib import Path

import vttrelay.client

REPO = Path(vttrelay.client.__file__).parents[3]
CLIENT = REPO / "src" / "vttrelay" / "client"


def copy_client_distribution(dest: Path) -> Path:
    """`clients/python` and the `vttrelay.client` sources it packages, laid out as in the
    repository under `dest`; returns the distribution's folder (`dest/clients/python`)."""
    shutil.copytree(REPO / "clients" / "python", dest / "clients" / "python")
    shutil.copytree(
        CLIENT, dest / "src" / "vttrelay" / "client", ignore=shutil.ignore_patterns("__pycache__")
    )
    return dest / "clients" / "python"
