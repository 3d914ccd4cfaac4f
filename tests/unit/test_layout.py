"""The code's shape stays what issue 12 made it: small modules, SQL in stores, no reach-ins, a true map."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dreammem", "dreammem_bench", "langchain_dreammem", "llamaindex_dreammem")
SQL = re.compile(
    r"^\s*(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(VIRTUAL\s+)?(TABLE|INDEX|TRIGGER)|DROP\s+(TABLE|INDEX|TRIGGER)|PRAGMA\s+\w+|BEGIN(\s+IMMEDIATE)?$|COMMIT$|ROLLBACK$)",
    re.DOTALL,
)


def _modules(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings (they may talk about SQL)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _sql_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and SQL.match(node.value)
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_over_500_lines(package: str) -> None:
    long = {
        _rel(p): n for p in _modules(package) if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}


def test_the_sql_detector_sees_sql_and_not_prose() -> None:
    for text in (
        "SELECT id FROM records WHERE user_id = ?",
        "INSERT OR IGNORE INTO dream_queue(record_id) VALUES (?)",
        "UPDATE records SET status = ?",
        "  DELETE FROM task_state WHERE user_id = ?",
        "CREATE VIRTUAL TABLE fts USING fts5(terms)",
        "PRAGMA data_version",
        "BEGIN IMMEDIATE",
        "COMMIT",
    ):
        assert SQL.match(text), text
    for text in (
        "select the newest record",
        "Update the index after commit",
        "delete from my memory",
        "commit",
    ):
        assert not SQL.match(text), text


def test_every_sql_statement_lives_in_stores() -> None:
    outside = {
        _rel(p): found
        for p in _modules(*PACKAGES)
        if not _rel(p).startswith("dreammem/stores/") and (found := _sql_literals(p))
    }
    assert outside == {}


def test_the_stores_do_hold_sql() -> None:
    """The detector above is not blind: the SQLite store's modules are full of statements."""
    assert len([s for p in _modules("dreammem/stores/sqlite") for s in _sql_literals(p)]) > 20


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if any(part.startswith("_") for part in a.name.split("."))]
    return found


def test_the_private_import_detector_sees_reach_ins(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from dreammem.memory import _lock, DreamMemory\nfrom x import __version__\nimport a._b\n",
        encoding="utf-8",
    )
    assert _private_imports(module) == ["dreammem.memory._lock", "a._b"]


def test_no_module_outside_the_engine_imports_a_private_name() -> None:
    reach_ins = {
        _rel(p): found
        for p in _modules(*PACKAGES)
        if not _rel(p).startswith("dreammem/engine/") and (found := _private_imports(p))
    }
    # langchain_dreammem/_common.py and llamaindex_dreammem/_shared.py are private *modules* of their
    # own package; importing them from the same package is not a reach-in.
    own = {
        path: [name for name in names if not name.startswith(path.split("/")[0] + "._")]
        for path, names in reach_ins.items()
    }
    assert {path: names for path, names in own.items() if names} == {}


_LAYERS = ("engine", "recall", "stores", "write")


@pytest.mark.parametrize("layer", _LAYERS)
def test_lower_layers_import_neither_the_facade_nor_a_dream_stage(layer: str) -> None:
    upward = {}
    for path in _modules(f"dreammem/{layer}"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        bad = [
            name
            for name in names
            if name in {"dreammem.memory", "dreammem.cli"}
            or name.startswith(("dreammem.dream", "dreammem_bench"))
        ]
        if bad:
            upward[_rel(path)] = bad
    assert upward == {}


def test_the_core_never_imports_the_benchmark_harness_or_a_framework() -> None:
    for path in _modules("dreammem"):
        text = path.read_text(encoding="utf-8")
        for name in ("dreammem_bench", "langchain", "llama_index"):
            imports = re.findall(rf"^\s*(?:from|import) {name}\b", text, re.MULTILINE)
            if _rel(path) != "dreammem/cli_harness.py" or name != "dreammem_bench":
                assert imports == [], (_rel(path), name)


def _module_map() -> str:
    text = (ROOT / "docs/ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("## Module map")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _mapped() -> set[str]:
    return set(re.findall(r"`([a-z_]+(?:/[a-z_0-9]+)*\.py)`", _module_map()))


def test_the_architecture_map_names_every_module() -> None:
    modules = {_rel(p) for p in _modules(*PACKAGES) if p.name != "__init__.py"}
    missing = sorted(modules - _mapped())
    assert missing == [], "add a line for each to the Module map of docs/ARCHITECTURE.md"


def test_every_module_the_architecture_map_names_exists() -> None:
    assert sorted(m for m in _mapped() if not (ROOT / m).is_file()) == []


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    return names | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_only_the_neo4j_store_modules_import_the_driver() -> None:
    importers = {
        _rel(p)
        for p in _modules(*PACKAGES)
        if any(name == "neo4j" or name.startswith("neo4j.") for name in _imports(p))
    }
    assert importers == {"dreammem/stores/neo4j.py", "dreammem/stores/neo4j_client.py"}


def test_the_library_never_prints_and_logs_by_module_name() -> None:
    """The CLI prints; everything else logs through ``logging.getLogger(__name__)``."""
    for path in _modules("dreammem", "langchain_dreammem", "llamaindex_dreammem"):
        if path.name.startswith("cli") or path.name == "__main__.py":
            continue
        for call in _calls(path):
            assert not (isinstance(call.func, ast.Name) and call.func.id == "print"), _rel(path)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "getLogger":
                assert [ast.unparse(a) for a in call.args] == ["__name__"], _rel(path)
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
                levels = {"debug", "info", "warning", "error", "exception"}
                root_call = call.func.value.id == "logging" and call.func.attr in levels
                assert not root_call, f"{_rel(path)} logs on the root logger"


def test_nothing_is_pickled() -> None:
    for path in _modules(*PACKAGES):
        assert not {"pickle", "cPickle", "dill"} & _imports(path), _rel(path)
        for call in _calls(path):
            for keyword in call.keywords:
                if keyword.arg == "allow_pickle":
                    value = keyword.value
                    assert isinstance(value, ast.Constant) and value.value is False, _rel(path)


def test_no_reach_in_is_silenced_and_every_lazy_import_says_why() -> None:
    for path in _modules(*PACKAGES):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{_rel(path)}:{number}"
            assert "SLF001" not in line, where
            if "noqa: PLC0415" in line or ("noqa:" in line and "PLC0415" in line):
                assert re.search(r"PLC0415\s+-\s+\S", line), f"{where}: say why the import is lazy"


def test_the_facade_stays_a_thin_shell() -> None:
    assert len((ROOT / "dreammem/memory.py").read_text(encoding="utf-8").splitlines()) <= 450


@pytest.mark.parametrize(
    "module", ["dreammem/agent_api.py", "dreammem/keyed.py", "langchain_dreammem", "llamaindex_dreammem"]
)
def test_the_adapters_use_the_facade_never_the_record_store(module: str) -> None:
    paths = [ROOT / module] if module.endswith(".py") else _modules(module)
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        reach = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "store"]
        assert reach == [], _rel(path)
        assert not any(name.startswith("dreammem.stores") for name in _imports(path)), _rel(path)
