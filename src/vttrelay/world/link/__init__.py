"""The world's link to a relay: the agent, which only moves frames between the relay's `/relay`
WebSocket and the world's runtime, exactly as the Foundry module does; and the stored connection
(`connection.json`)."""
