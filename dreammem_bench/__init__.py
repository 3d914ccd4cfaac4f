"""The DreamMem benchmark harness: commands that print numbers next to baselines computed in the same run.

Shipped in the ``dreammem`` distribution but never imported by :mod:`dreammem`; its own
dependencies come with the ``bench`` extra (``pip install 'dreammem[bench]'``), checked here
so a missing one fails at once with that advice instead of deep inside a run.
"""

from importlib.util import find_spec

from dreammem.cli_harness import INSTALL_HINT

REQUIRES = ("bm25s",)
"""Modules the harness needs beyond :mod:`dreammem`'s own dependencies."""

for _name in REQUIRES:
    if find_spec(_name) is None:
        raise ModuleNotFoundError(f"the benchmark harness needs {_name}: {INSTALL_HINT}", name=_name)
