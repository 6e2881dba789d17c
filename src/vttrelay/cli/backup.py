"""`vttrelay backup DEST` and `vttrelay restore SRC` (the data dir copied while serving, and
put back while no relay runs on it: `vttrelay.server.backup`)."""

from __future__ import annotations

import argparse
from typing import Any

from vttrelay.cli.common import data_dir, err, relay_config
from vttrelay.server.backup import BackupError, Copied, backup, holds_relay, restore
from vttrelay.world.link.connection import connection_path, load_connection


def _summary(files: list[Copied]) -> str:
    databases = [c.path for c in files if c.kind == "sqlite"]
    others = len(files) - len(databases)
    size = sum(c.size for c in files) / (1024 * 1024)
    return (
        f"{len(databases)} database(s) ({', '.join(databases)}), {others} other file(s), "
        f"{size:.1f} MiB"
    )


def cmd_backup(args: argparse.Namespace) -> int:
    config = relay_config(args)
    try:
        files = backup(config.data_dir, args.dest, config.database)
    except BackupError as refused:
        err(f"vttrelay backup: {refused}")
        return 2
    what = config.data_dir if holds_relay(files) else f"the embedded world of {config.data_dir}"
    err(f"Backed up {what}: {_summary(files)}, each database checked.")
    print(args.dest)
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    target = data_dir(args)
    try:
        files, moved_to = restore(args.source, target, replace=args.replace)
    except BackupError as refused:
        err(f"vttrelay restore: {refused}")
        return 2
    if moved_to is not None:
        err(f"What was in {target} is now in {moved_to}.")
    if holds_relay(files):
        err(f"Restored {target} from {args.source}: {_summary(files)}.")
        return 0
    err(
        f"Restored the embedded world of {target} from {args.source} (a world-only backup, no "
        f"relay store): {_summary(files)}."
    )
    if connection_path(target).is_file():  # the backup's (the data dir held nothing else)
        relay = load_connection(target).relay_url
        err(
            f"Its relay connection is restored too: `vttrelay world run --data-dir {target}` "
            f"connects it to {relay}."
        )
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `backup` and `restore` to the `vttrelay` command."""
    p = commands.add_parser(
        "backup",
        parents=[common],
        help="copy the data dir (relay store, every embedded world; or a world run's world alone) "
        "while it serves",
    )
    p.add_argument("dest", metavar="DEST", help="a new folder to write the backup to")
    p.set_defaults(func=cmd_backup)
    p = commands.add_parser(
        "restore",
        parents=[common],
        help="put a backup back into the data dir (relay and world run stopped)",
    )
    p.add_argument("source", metavar="SRC", help="a folder `vttrelay backup` wrote")
    p.add_argument(
        "--replace",
        action="store_true",
        help="restore over a data dir that holds something (it is moved aside, not deleted)",
    )
    p.set_defaults(func=cmd_restore)
