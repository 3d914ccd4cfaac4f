"""Benchmarks: commands that print numbers next to baselines computed in the same run."""
