"""A private PostgreSQL server for the test session.

Started in a temporary data directory on 127.0.0.1 and a free port, as the `postgres` OS user
when the tests run as root (the server refuses to run as root), and stopped at the end.
Set AUTO_CDC_PGPORT to use a server that is already running on 127.0.0.1 instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str = "postgres"
    data_dir: Path | None = None
    _bindir: Path | None = field(default=None, repr=False)

    def env(self) -> dict[str, str]:
        return {
            "PGHOST": self.host,
            "PGPORT": str(self.port),
            "PGUSER": self.user,
            "PGPASSWORD": "",
            "PGDATABASE": "postgres",
        }

    def stop(self) -> None:
        if self.data_dir is None or self._bindir is None:
            return
        _as_postgres([str(self._bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
        self.data_dir = None


def _bindir() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return Path(candidates[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL server binaries not found: run scripts/test.sh, which installs them")


def _postgres_command(cmd: list[str]) -> list[str]:
    """The server refuses to run as root: run its tools as the postgres user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _as_postgres(cmd: list[str]) -> None:
    subprocess.run(_postgres_command(cmd), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(settings: dict[str, str] | None = None) -> PostgresServer:
    """A private server; `settings` are extra server settings (the benchmark gives it a
    realistic shared_buffers)."""
    external = os.environ.get("AUTO_CDC_PGPORT")
    if external:
        return PostgresServer(host="127.0.0.1", port=int(external))
    bindir = _bindir()
    root = Path(tempfile.mkdtemp(prefix="auto_cdc_pg_"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, user="postgres")
    _as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8"])
    for attempt in range(5):  # another test worker may take the free port first
        port = _free_port()
        options = f"-h 127.0.0.1 -p {port} -k {data} -c fsync=off -c full_page_writes=off"
        options += "".join(f" -c {name}={value}" for name, value in (settings or {}).items())
        started = subprocess.run(
            _postgres_command(
                [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "server.log"), "-w", "start"]
            ),
            capture_output=True,
        )
        if started.returncode == 0:
            break
        if attempt == 4:
            raise RuntimeError(f"PostgreSQL did not start: {started.stdout.decode()}{started.stderr.decode()}")
    server = PostgresServer(host="127.0.0.1", port=port, data_dir=data, _bindir=bindir)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"PostgreSQL did not start on port {port}")
