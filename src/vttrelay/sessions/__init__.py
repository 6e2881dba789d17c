"""Sessions: worlds the relay starts on request (DESIGN §7a). The handshake of the reference
(`handshake`), child processes in their own process groups reaped at start (`processes`), the
embedded worlds an account keeps on the relay (`catalog`), browser sessions on a Foundry server
(`headless`), auto-starts joined and cooled down (`launches`), and the manager the relay's
session routes and auto-start call (`manager`, its data in `model`). It imports neither the
relay nor the world: the composition root gives it what it needs (minting connection tokens,
whether a world is live, the account's paired worlds and stored logins) as arguments."""
