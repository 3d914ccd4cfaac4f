"""Load test against one Neo4j server: N processes of mixed operations, then an audit (issue 13).

Prints lost / duplicated / cross-user / not-forgotten counts (all must be 0), retries,
and p50 / p95 per operation. Loopback only; bounded by ``--workers`` x ``--ops``.
See :mod:`dreammem_bench.shared_load`.

    bash scripts/neo4j.sh up
    HF_HUB_OFFLINE=1 python benchmarks/neo4j_load.py --uri "$(bash scripts/neo4j.sh uri)" \
        --workers 4 --ops 300
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from dreammem_bench.shared_load import run_load


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", required=True, help="bolt:// or neo4j:// URI of the server")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--ops", type=int, default=300, help="operations per worker")
    args = parser.parse_args()
    report = run_load(args.uri, workers=args.workers, ops=args.ops, seed=int(time.time()))
    print(json.dumps(dataclasses.asdict(report), indent=2))
    bad = report.lost + report.duplicated + report.cross_user + report.not_forgotten
    raise SystemExit(1 if bad or report.failures else 0)


if __name__ == "__main__":
    main()
