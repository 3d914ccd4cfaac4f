"""Benchmarks behind ``dreammem bench ...``: each measures and returns numbers; the CLI prints them."""
