"""vttrelay: an HTTP relay for virtual tabletop worlds, with an embedded D&D 5e world.

`relay/` serves the REST API, event streams and the world WebSocket; `world/` is the embedded
world that connects to a relay exactly like the Foundry module does; `client/` is a Python client;
`protocol.py` is the wire protocol both sides share. `server/` composes them (with the plug-ins
`dashboard/` and `mcp/`) and `cli/` is the `vttrelay` command; the layers are in DESIGN §11.
"""

from pathlib import Path

__version__ = "0.1.0"

# The directory holding this package: first on a child Python's PYTHONPATH, the child imports
# this very vttrelay (the script sandbox's children, the world's heavy-work process).
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
