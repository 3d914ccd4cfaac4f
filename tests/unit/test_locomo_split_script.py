"""scripts/make_locomo_dev.py: the first five conversations, in the release's formatting."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_locomo_dev.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_locomo_dev", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _release(n: int = 10) -> list[dict[str, object]]:
    return [
        {"sample_id": f"conv-{i}", "conversation": {"speaker_a": "Å", "session_1": []}, "qa": [], "extra": i}
        for i in range(n)
    ]


def test_split_is_the_first_five_formatted_like_the_release(tmp_path: Path) -> None:
    script = _script()
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps(_release(), indent=2))
    out = tmp_path / "dev.json"
    assert script.main([str(source), str(out), "--any-release"]) == 0
    written = out.read_bytes()
    assert [c["sample_id"] for c in json.loads(written)] == [f"conv-{i}" for i in range(5)]
    assert written == json.dumps(_release()[:5], indent=2).encode()  # ASCII escapes, indent 2, no newline
    assert b"\\u00c5" in written


def test_another_release_is_refused_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script()
    source = tmp_path / "locomo10.json"
    source.write_text(json.dumps(_release()))
    assert hashlib.sha256(source.read_bytes()).hexdigest() != script.RELEASE_SHA256
    assert script.main([str(source), str(tmp_path / "dev.json")]) == 2
    assert "not the release" in capsys.readouterr().err and not (tmp_path / "dev.json").exists()


@pytest.mark.parametrize("data", [{"not": "a list"}, [{"sample_id": "x"}] * 5, [1, 2, 3]])
def test_bad_input_is_one_error_line(
    tmp_path: Path, data: object, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bad.json"
    source.write_text(json.dumps(data))
    assert _script().main([str(source), str(tmp_path / "dev.json"), "--any-release"]) == 1
    assert capsys.readouterr().err.startswith("error:")
