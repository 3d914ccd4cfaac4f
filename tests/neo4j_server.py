"""The Neo4j test servers as pytest session fixtures.

``neo4j_server`` starts the repo's own Neo4j (``scripts/neo4j.sh up``: Neo4j
Community from Maven Central, loopback only, auth off) once per session and stops it
at the end; with ``NEO4J_URI`` set it uses that running server instead (and never
stops or restarts it). ``newer_neo4j_server`` starts :data:`NEWER_VERSION` (2025.x
and later run on Java 21+) the same way, on a free port and a state folder of its
own. Without Java or Maven the tests that need them are skipped with a message
saying how to enable them, unless ``CI`` is set: then a missing or unstartable
server fails them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from dreammem.stores.neo4j_client import Neo4jClient

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "neo4j.sh"
NEWER_VERSION = "2026.08.1"
"""The newest Neo4j Community Maven Central served when it was tried (vector search filters inside)."""
HOW_TO_ENABLE = (
    "Neo4j tests need Java 17 or 21 and Maven (Debian: apt-get install openjdk-17-jdk-headless maven; "
    "the first run downloads Neo4j from Maven Central), or NEO4J_URI=bolt://HOST:PORT of a running "
    "Neo4j 5 server with auth off. `make neo4j-up` starts the repo's own server. "
    f"The newer server ({NEWER_VERSION}) needs Java 21 or later (Java 25 preferred)."
)


@dataclass(frozen=True)
class Neo4jServer:
    """A running Neo4j server; ``managed`` when this session started it."""

    uri: str
    managed: bool
    env: dict[str, str] | None = None
    """The environment ``scripts/neo4j.sh`` runs in (None: this process's)."""

    def _script(self, command: str) -> str:
        proc = subprocess.run(
            ["bash", str(SCRIPT), command],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=self.env,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"scripts/neo4j.sh {command} failed:\n{proc.stderr[-3000:]}")
        return proc.stdout.strip()

    def stop(self) -> None:
        """Stop the server (its data is kept for :meth:`restart`)."""
        self._require_managed()
        self._script("down")

    def kill(self) -> None:
        """Kill the server with SIGKILL (a crash: no clean shutdown); its data is kept for :meth:`restart`."""
        self._require_managed()
        self._script("kill")

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Stop the server process with SIGSTOP (a frozen host: connections stay open, nothing
        answers) for the ``with`` block, then let it go on with SIGCONT."""
        self._require_managed()
        status = self._script("status").split()  # "running pid N bolt://..."
        pid = int(status[2])
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)

    def restart(self) -> None:
        """Start it again with the same data and port, and wait until it answers."""
        self._require_managed()
        uri = self._script("restart").splitlines()[-1]
        assert uri == self.uri, f"restarted on {uri}, expected {self.uri}"
        _wait_ready(self.uri)

    def _require_managed(self) -> None:
        if not self.managed:
            pytest.skip("this test stops the Neo4j server; it runs only on a server the tests started")


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"Neo4j test server unavailable: {reason}. CI is set, so Neo4j tests must run.")
    pytest.skip(f"Neo4j test server unavailable: {reason}. {HOW_TO_ENABLE}")


def _wait_ready(uri: str, timeout: float = 60.0) -> None:
    from neo4j import GraphDatabase  # noqa: PLC0415 - the neo4j extra is optional: the server fixture skips without it
    from neo4j.exceptions import Neo4jError, ServiceUnavailable  # noqa: PLC0415 - the neo4j extra is optional: the server fixture skips without it

    deadline = time.monotonic() + timeout
    with GraphDatabase.driver(uri, auth=None, connection_timeout=3.0) as driver:
        while True:
            try:
                driver.verify_connectivity()
                return
            except (ServiceUnavailable, Neo4jError, OSError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jServer]:
    """A Neo4j server for the whole test session (see the module docstring)."""
    try:
        import neo4j  # noqa: F401, PLC0415 - probe: is the optional driver installed?
    except ImportError:
        _unavailable("the neo4j Python driver is not installed (pip install 'dreammem[neo4j]')")
    external = os.environ.get("NEO4J_URI")
    if external:
        try:
            _wait_ready(external, timeout=30.0)
        except Exception as exc:
            _unavailable(f"NEO4J_URI={external} does not answer ({exc})")
        yield Neo4jServer(external, managed=False)
        return
    yield from _managed(None)


@pytest.fixture(scope="session")
def newer_neo4j_server() -> Iterator[Neo4jServer]:
    """:data:`NEWER_VERSION` for the whole test session, beside ``neo4j_server`` (own port and state)."""
    try:
        import neo4j  # noqa: F401, PLC0415 - probe: is the optional driver installed?
    except ImportError:
        _unavailable("the neo4j Python driver is not installed (pip install 'dreammem[neo4j]')")
    yield from _managed({**os.environ, "NEO4J_VERSION": NEWER_VERSION, "NEO4J_PORT": "auto"})


def _managed(env: dict[str, str] | None) -> Iterator[Neo4jServer]:
    """Start the repo's server (``scripts/neo4j.sh up`` in ``env``), yield it, stop it."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        _unavailable(f"{' and '.join(missing)} not found on PATH")
    proc = subprocess.run(
        ["bash", str(SCRIPT), "up"], capture_output=True, text=True, timeout=900, check=False, env=env
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        _unavailable(f"`scripts/neo4j.sh up` failed:\n{proc.stderr[-3000:]}")
    server = Neo4jServer(proc.stdout.strip().splitlines()[-1], managed=True, env=env)
    try:
        _wait_ready(server.uri)
        yield server
    finally:
        subprocess.run(["bash", str(SCRIPT), "down"], capture_output=True, timeout=120, check=False, env=env)


def opened_client(server: Neo4jServer) -> Iterator[Neo4jClient]:
    """A client of this server for one test, closed after it (``yield from`` in a fixture)."""
    from dreammem.stores.neo4j_client import Neo4jClient  # noqa: PLC0415 - the driver only where a test needs it

    client = Neo4jClient(server.uri)
    try:
        yield client
    finally:
        client.close()
