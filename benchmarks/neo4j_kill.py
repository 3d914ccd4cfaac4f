"""Kill the Neo4j server (SIGKILL) mid-load and restart it: nothing acknowledged is lost (issue 13).

Prints how many turns were acknowledged (before and after the restart), lost /
duplicated / cross-user counts (all must be 0), the typed errors the writers met,
how long the server was down and how long the writers took to write again. The
server must be the repo's own (``scripts/neo4j.sh``: this kills and restarts it,
keeping its data). See :mod:`dreammem_bench.outage`.

    bash scripts/neo4j.sh up
    HF_HUB_OFFLINE=1 python benchmarks/neo4j_kill.py --writers 4 --before 400 --after 50
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import tempfile
import time
from pathlib import Path

from dreammem_bench.outage import run_outage

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "neo4j.sh"


def _script(command: str) -> str:
    proc = subprocess.run(["bash", str(SCRIPT), command], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"scripts/neo4j.sh {command} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--before", type=int, default=400, help="acknowledged turns before the kill")
    parser.add_argument("--after", type=int, default=50, help="per writer, after the restart")
    parser.add_argument("--limit", type=float, default=900.0, help="seconds the whole run may take")
    args = parser.parse_args()
    uri = _script("uri")
    with tempfile.TemporaryDirectory() as folder:
        report = run_outage(
            uri,
            kill=lambda: _script("kill"),
            restart=lambda: _script("restart"),
            folder=Path(folder),
            writers=args.writers,
            before=args.before,
            after=args.after,
            seed=int(time.time()),
            limit_s=args.limit,
        )
    print(json.dumps(dataclasses.asdict(report), indent=2))
    bad = report.lost + report.duplicated + report.cross_user + len(report.untyped)
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
