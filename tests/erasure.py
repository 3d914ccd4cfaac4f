"""Byte search over a store's files, for the erasure tests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path


def encodings(word: str) -> Iterator[bytes]:
    """The byte forms a word may take in a file: as is and lower-cased, in UTF-8, -16 and -32."""
    for text in dict.fromkeys((word, word.lower(), word.casefold())):
        for codec in ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le"):
            yield text.encode(codec)


def all_encodings(words: Iterable[str]) -> list[bytes]:
    """Every byte form of every word."""
    return [form for word in words for form in encodings(word)]


def files_holding(root: Path, needles: Iterable[bytes]) -> list[str]:
    """``"file: needle"`` for every file under ``root`` that holds one of the byte strings."""
    wanted = list(needles)
    hits = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits.extend(f"{path.name}: {n!r}" for n in wanted if n in data)
    return hits
