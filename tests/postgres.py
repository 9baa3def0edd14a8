"""A real PostgreSQL server for tests: the one ``MADSPY_TEST_POSTGRES`` names, or a throwaway cluster.

Without the variable, a cluster is made with the installed server's ``initdb`` in a temporary folder
and started on a free loopback port for the test session (as the ``postgres`` user when the tests run
as root, which PostgreSQL refuses to run as). ``.ci/run`` installs Debian's postgresql package, so CI
runs every PostgreSQL test; where no server is installed, those tests are skipped and say why.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "MADSPY_TEST_POSTGRES"


def server_bin() -> Path | None:
    """The folder of the installed server's programs (initdb, pg_ctl), or None."""
    if found := shutil.which("initdb"):
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a new PostgreSQL cluster; yields its URL (user ``madspy``, trust auth on loopback)."""
    bin_dir = server_bin()
    if bin_dir is None:
        raise FileNotFoundError("no PostgreSQL server installed (initdb not found)")
    root = Path(tempfile.mkdtemp(prefix="madspy-pg-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
    data, port = root / "data", _free_port()
    run = lambda *args: subprocess.run(as_user + [str(a) for a in args], check=True, capture_output=True)  # noqa: E731
    run(bin_dir / "initdb", "-D", data, "-A", "trust", "-U", "madspy")
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(bin_dir / "pg_ctl", "-D", data, "-o", options, "-l", root / "log", "-w", "start")
    try:
        yield f"postgresql://madspy@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], check=False)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str, name: str) -> str:
    """Create an empty database ``name`` on the server; returns its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}"')
        conn.execute(f'create database "{name}"')
    return server_url.rsplit("/", 1)[0] + f"/{name}"
