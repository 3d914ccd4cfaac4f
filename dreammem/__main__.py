"""``python -m dreammem ...``: the same as the ``dreammem`` command."""

from dreammem.cli import main

main()
