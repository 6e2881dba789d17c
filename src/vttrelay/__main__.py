"""`python -m vttrelay`: the same as the `vttrelay` command."""

from vttrelay.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
