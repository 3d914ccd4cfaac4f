"""The embedded store beside Neo4j, same run: recall p50/p95 and ingest as the store grows (issue 37).

Starts the repo's own Neo4j (``scripts/neo4j.sh up`` with ``NEO4J_PORT=auto`` and the
state folder ``--state``; ``NEO4J_HEAP`` / ``NEO4J_PAGECACHE`` from the environment),
or uses ``--neo4j-uri`` (the bench's users must have no records there), opens an
embedded store in a temporary folder beside it, and grows both through ``--sizes``
(records per user) for ``--users`` users; see :mod:`dreammem_bench.backends`.
``--neo4j-version`` picks the server the script builds and starts (5.26 by default;
``2026.08.1`` filters the vector search by user inside the index).
Prints one JSON line per size as it is measured (stderr) and the whole report (stdout).

    HF_HUB_OFFLINE=1 nice -n 5 python benchmarks/backends.py --sizes 1000,3000,10000,100000 --users 1
    HF_HUB_OFFLINE=1 nice -n 5 python benchmarks/backends.py --sizes 100,1000 --users 100
    HF_HUB_OFFLINE=1 nice -n 5 python benchmarks/backends.py --sizes 1000,3000,10000 --neo4j-version 2026.08.1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dreammem import DreamMemory
from dreammem_bench import backends as bench

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "neo4j.sh"


def server_env(state: str, version: str | None) -> dict[str, str]:
    """The environment ``scripts/neo4j.sh`` runs in: a free port, this state folder, this version."""
    env = {**os.environ, "NEO4J_PORT": "auto", "NEO4J_STATE_DIR": state}
    if version:
        env["NEO4J_VERSION"] = version
    else:  # the script's default (5.26), whatever the caller's environment says
        env.pop("NEO4J_VERSION", None)
    return env


def _server(command: str, state: str, version: str | None) -> str:
    env = server_env(state, version)
    proc = subprocess.run(
        ["bash", str(SCRIPT), command], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"scripts/neo4j.sh {command} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def _server_agent(uri: str) -> str:
    from neo4j import GraphDatabase  # noqa: PLC0415 - the neo4j extra is optional

    with GraphDatabase.driver(uri, auth=None) as driver:
        return str(driver.get_server_info().agent)


def build_parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 3000, 10000])
    parser.add_argument("--users", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--batch",
        type=int,
        default=250,
        help="turns per add_many (one transaction; 1,000 timed out on Neo4j)",
    )
    parser.add_argument("--embedder", default="hashing", help="hashing (measures the stores) or minilm")
    parser.add_argument("--neo4j-uri", help="a running server instead of starting the repo's own")
    parser.add_argument("--state", default=".neo4j-bench", help="state folder of the server this starts")
    parser.add_argument(
        "--neo4j-version",
        help="Neo4j version the started server runs (scripts/neo4j.sh NEO4J_VERSION, e.g. 2026.08.1); "
        "default: the script's 5.26",
    )
    parser.add_argument("--project", type=int, default=1_000_000, help="records to project ingest hours for")
    parser.add_argument("--json", type=Path)
    return parser


def main() -> None:
    args = build_parser().parse_args()

    started = args.neo4j_uri is None
    uri = _server("up", args.state, args.neo4j_version) if started else args.neo4j_uri
    embedder = bench.embedder_named(args.embedder)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(sys.argv),
        "machine": f"{os.cpu_count()} cores, shared",
        "neo4j": {
            "server": _server_agent(uri),
            "started_by": "scripts/neo4j.sh up" if started else "--neo4j-uri",
            "heap": os.environ.get("NEO4J_HEAP", "1g (script default)"),
            "pagecache": os.environ.get("NEO4J_PAGECACHE", "256m (script default)"),
        },
        "vectors": embedder.name
        + (
            " (feature hashing, 384-d: measures the stores, not the model)"
            if args.embedder == "hashing"
            else ""
        ),
        "users": args.users,
        "queries": args.queries,
        "k": args.k,
    }

    def show(result: bench.SizeResult) -> None:
        print(json.dumps(result.to_dict()), file=sys.stderr, flush=True)

    try:
        with (
            tempfile.TemporaryDirectory(prefix="dreammem-backends-") as folder,
            DreamMemory(folder, embedder=embedder) as embedded,
            DreamMemory(uri, embedder=embedder) as server,
        ):
            sides = [bench.Side(bench.EMBEDDED, embedded), bench.Side(bench.NEO4J, server)]
            results = bench.run_sizes(
                sides,
                args.sizes,
                users=args.users,
                queries=args.queries,
                k=args.k,
                batch=args.batch,
                on_size=show,
            )
    finally:
        if started:
            _server("down", args.state, args.neo4j_version)
    report["sizes"] = [r.to_dict() for r in results]
    report["targets"] = bench.check_targets(results)
    hours = bench.project_ingest(results, args.project)
    report[f"ingest_hours_for_{args.project}_at_the_last_rate"] = {k: round(v, 2) for k, v in hours.items()}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
