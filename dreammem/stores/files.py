"""Writing a derived file whole or not at all, safely beside other processes.

Several processes may write the same file (each one's FAISS index on close). Each
writes its own uniquely named temp file in the target's folder, fsyncs it, renames
it over the target (atomic on POSIX) and fsyncs the folder, so a reader or a crash
sees either the old file or the new one, never a mix or an empty file.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from dreammem.errors import BackendError

__all__ = ["write_atomic"]

# A full disk or quota may clear; a permission or a missing folder will not.
_RETRYABLE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EAGAIN, errno.EINTR})


def write_atomic(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` through ``write(handle)``: whole, durable, or not at all.

    Raises:
        BackendError: the file cannot be written (``is_retryable`` for a full disk);
            the previous file is left as it was and no temp file stays behind.
    """
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _error(exc, path) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _mode(path))
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _error(exc, path) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _mode(path: Path) -> int:
    """The target's permissions, or a data file's usual 0644 (mkstemp makes 0600)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o644


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (the folder entry is what a crash would lose)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _error(exc: OSError, path: Path) -> BackendError:
    return BackendError(f"cannot write {path}: {exc.strerror or exc}", is_retryable=exc.errno in _RETRYABLE)
