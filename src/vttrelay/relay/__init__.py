"""The relay: REST endpoints, event streams, the world WebSocket, keys and pairing."""
