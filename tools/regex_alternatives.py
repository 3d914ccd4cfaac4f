r"""Count the regex alternatives written in Python modules (issue 34: the write path's rule layer).

For every string literal holding '|' (escaped ``\|`` and '|' inside ``[...]`` not counted) the
number of '|' plus one, and each argument of a call to ``_en(...)`` (it joins its words with '|').

    python tools/regex_alternatives.py dreammem/write/statements.py dreammem/write/rules.py
"""

from __future__ import annotations

import ast
import re
import sys


def alternatives(source: str) -> int:
    """The regex alternatives written in one module's source."""
    total = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            bare = re.sub(r"\[[^\]]*\]", "", re.sub(r"\\.", "", node.value))
            total += bare.count("|") + 1 if "|" in bare else 0
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_en":
            total += len(node.args)
    return total


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as handle:
            print(f"{path}: {alternatives(handle.read())}")
