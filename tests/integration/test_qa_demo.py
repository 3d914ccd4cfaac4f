"""`dreammem demo`, the README's first command, on the real MiniLM model."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app

pytestmark = pytest.mark.integration


def test_demo_recalls_across_sessions_and_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(app, ["demo"], catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "50,000 USD" in out and "2024-07-15" in out and "Tom Becker" in out
    assert "'I prefer Excel reports over PDF, please.' [superseded] -> " in out
    assert "[active]" in out
    # the assistant's echo of the replaced format is shown as earlier, not as a current fact
    assert "[earlier, possibly outdated] Noted: Excel reports" in out
    assert "finds someone-else's memory: False" in out
    assert not list(tmp_path.glob("dreammem-demo-*"))  # the temporary store is removed without --keep
    kept = CliRunner().invoke(app, ["demo", "--path", str(tmp_path / "kept")], catch_exceptions=False)
    assert kept.exit_code == 0 and (tmp_path / "kept" / "dreammem.db").exists()
