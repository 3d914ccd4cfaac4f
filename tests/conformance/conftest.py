"""Conformance suites: one abstract suite per store contract, run against every backend."""
