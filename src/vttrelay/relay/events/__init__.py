"""World events on their way to subscribers: the event model, the mailboxes, the hub that fans
events out, and the two transports, Server-Sent Events and `/ws/api` (DESIGN §11)."""
