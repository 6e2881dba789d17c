"""The world at run time: dispatch over its action table, transactions and events, and the
embedded world on an event loop of its own (`thread.start_in_thread`)."""
