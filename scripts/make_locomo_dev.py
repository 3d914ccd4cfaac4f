"""Build the LoCoMo development split that docs/BENCHMARKS.md measures on.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is not shipped with DreamMem.
Download ``data/locomo10.json`` from https://github.com/snap-research/locomo, then::

    python scripts/make_locomo_dev.py locomo10.json locomo_dev.json
    dreammem bench locomo --data locomo_dev.json

The development split is the first five of the ten conversations (conv-26, conv-30,
conv-41, conv-42, conv-43), unchanged, written as the original (a JSON list,
``indent=2``); the other five are held out. The script checks the input against the
release the benchmarks were run on (commit 3eb6f2c, 2024-08-12) and the output
against the split they used, and says so when either differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

RELEASE_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
"""sha256 of ``data/locomo10.json`` at snap-research/locomo commit 3eb6f2c."""
DEV_SHA256 = "7c2fafddef878db45094b46dded0cad8e2791e930e248003e0a671a05baf4293"
"""sha256 of the development split the benchmarks in docs/BENCHMARKS.md used."""
DEV_CONVERSATIONS = 5


def dev_split(conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first five conversations, in file order.

    Raises:
        ValueError: the data is not a list of at least five LoCoMo conversations.
    """
    if not isinstance(conversations, list) or len(conversations) < DEV_CONVERSATIONS:
        raise ValueError(f"expected a JSON list of at least {DEV_CONVERSATIONS} conversations")
    for item in conversations[:DEV_CONVERSATIONS]:
        if not isinstance(item, dict) or not {"sample_id", "conversation", "qa"} <= item.keys():
            raise ValueError("not a LoCoMo file: conversations need sample_id, conversation and qa")
    return conversations[:DEV_CONVERSATIONS]


def render(conversations: list[dict[str, Any]]) -> bytes:
    """The split in the original file's formatting (``indent=2``, ASCII escapes)."""
    return json.dumps(conversations, indent=2).encode("ascii")


def main(argv: list[str] | None = None) -> int:
    """Read the release, write the split; exit 1 on bad input, 2 on a checksum mismatch."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("source", type=Path, help="locomo10.json from snap-research/locomo")
    parser.add_argument("out", type=Path, help="where to write the development split")
    parser.add_argument(
        "--any-release", action="store_true", help="write the split even if the input is another release"
    )
    args = parser.parse_args(argv)
    try:
        raw = args.source.read_bytes()
        split = dev_split(json.loads(raw))
    except (OSError, ValueError) as exc:
        print(f"error: {args.source}: {exc}", file=sys.stderr)
        return 1
    if hashlib.sha256(raw).hexdigest() != RELEASE_SHA256 and not args.any_release:
        print(
            f"error: {args.source} is not the release the benchmarks used (sha256 differs); "
            "pass --any-release to build the split anyway",
            file=sys.stderr,
        )
        return 2
    out = render(split)
    args.out.write_bytes(out)
    same = hashlib.sha256(out).hexdigest() == DEV_SHA256
    ids = ", ".join(str(c["sample_id"]) for c in split)
    print(f"wrote {args.out}: {ids}" + ("" if same else " (differs from the split the benchmarks used)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
