"""Benchmarks: LoCoMo retrieval quality, throughput and latency."""
