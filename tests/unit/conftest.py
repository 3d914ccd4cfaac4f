"""Unit tests run with sockets disabled (see the Makefile's test target)."""
