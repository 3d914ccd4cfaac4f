"""Opening a store and writing Chinese prints nothing on stderr (no loader bars, no jieba log)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from dreammem import DreamMemory

with DreamMemory(sys.argv[1]) as memory:  # the real MiniLM model
    memory.add("我叫李明，住在北京，在阿里巴巴工作。", user_id="li")
    memory.add("下周三我要去上海出差。", user_id="li")
    hits = memory.recall("李明住在哪里？", user_id="li", k=1)
    print(hits[0].record.content)
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TMPDIR=str(tmp_path),  # jieba caches its dictionary in the temp dir: start without a cache
    )
    return env


def test_store_open_and_chinese_text_write_nothing_to_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "北京" in done.stdout
    assert done.stderr == ""
    assert list(tmp_path.glob("jieba*.cache"))  # the dictionary was really loaded from scratch


def test_cli_add_and_recall_in_chinese_write_nothing_to_stderr(tmp_path: Path) -> None:
    store = str(tmp_path / "cli-store")
    for args in (
        ["add", "我的护照号码是E12345678。", "--user", "li"],
        ["recall", "护照号码", "--user", "li"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "dreammem", *args, "--path", store],
            capture_output=True,
            text=True,
            env={**_env(tmp_path), "COLUMNS": "200"},
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    assert "E12345678" in done.stdout
