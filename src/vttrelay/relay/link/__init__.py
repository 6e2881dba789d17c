"""The `/relay` world socket: its protocol as a session without I/O, the aiohttp adapter that
serves it, the frames it writes and the requests awaiting a world's reply (DESIGN §11)."""
