"""Benchmarks for the relay: a fake world, a load generator driver and the scenarios.

`python -m bench` starts the relay as one process, a fake world in another process and a load
generator (wrk), runs the scenarios and prints a table per scenario; see `bench/RESULTS.md`.
"""
