"""The shared backends over Redis, for several relay instances serving one set of worlds:
the world directory (`directory.py`, with direct links between instances in `link.py`), the
event log (`events.py`), the counters (`counters.py`), and what they share (`client.py`: opening
a connection; `pubsub.py`: a subscription that survives reconnects)."""
