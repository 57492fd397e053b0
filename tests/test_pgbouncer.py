"""The engine through PgBouncer in transaction mode, where consecutive transactions of one
client connection run on whichever server connection is free (docs/scaling.md).

Nothing may outlive a transaction there: session settings, session advisory locks, temp
tables, LISTEN, and prepared statements, which psycopg makes on its own after a statement's
fifth run. Debian's PgBouncer (1.18 on bookworm) predates ``max_prepared_statements``
(1.21), so the engine runs with ``prepared_statements`` off. The package is installed here
when it is missing (``apt-get``; CI runs as root), and the bouncer listens on a free
loopback port in front of the session's server, with fewer server connections than the
engine has clients so that transactions really take turns on them.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hindsight_tools import MemoryEngine, Settings

SERVER_CONNECTIONS = 2
CLIENTS = 6
PGBOUNCER = "/usr/sbin/pgbouncer"


def pgbouncer_binary() -> str:
    """Debian's pgbouncer, installed first if it isn't there."""
    found = shutil.which("pgbouncer") or (PGBOUNCER if Path(PGBOUNCER).exists() else None)
    if found is not None:
        return found
    if os.geteuid() != 0:
        pytest.fail("pgbouncer is missing and only root can install it: apt-get install pgbouncer")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "pgbouncer"]
    if subprocess.run(install, env=env, capture_output=True, timeout=600).returncode != 0:
        # a machine that never read the package lists can't find it yet
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
        done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"apt-get install pgbouncer failed:\n{done.stderr}"
    return shutil.which("pgbouncer") or PGBOUNCER


def pgbouncer_version(binary: str) -> tuple[int, ...]:
    first = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()
    return tuple(int(part) for part in first[1].split("."))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as(server: dict[str, Any]) -> str | None:
    """PgBouncer refuses to run as root: as root it runs as the owner of the server's socket
    folder (the embedded server's own user, who alone may enter it), else as nobody."""
    if os.geteuid() != 0:
        return None
    host = str(server.get("host", ""))
    owner = pwd.getpwuid(os.stat(host).st_uid).pw_name if host.startswith("/") else "root"
    return owner if owner != "root" else "nobody"


@pytest.fixture(scope="module")
def bouncer(engine: MemoryEngine) -> Iterator[str]:
    """A PgBouncer in transaction mode in front of the session's server; its URL."""
    binary = pgbouncer_binary()
    server = psycopg.conninfo.conninfo_to_dict(engine.database_url)
    target = " ".join(
        f"{key}={server[key]}"
        for key in ("host", "port", "dbname", "user", "password")
        if server.get(key)
    )
    user = str(server.get("user") or "postgres")
    port = _free_port()
    folder = Path(tempfile.mkdtemp(prefix="ht-pgbouncer-"))
    (folder / "users.txt").write_text(f'"{user}" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"""[databases]
* = {target}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder / "users.txt"}
admin_users = {user}
pool_mode = transaction
default_pool_size = {SERVER_CONNECTIONS}
max_client_conn = 100
logfile = {folder / "pgbouncer.log"}
pidfile = {folder / "pgbouncer.pid"}
"""
    )
    command = [binary, str(folder / "pgbouncer.ini")]
    run_as = _run_as(server)
    if run_as is not None:
        shutil.chown(folder, run_as)
        for file in folder.iterdir():
            shutil.chown(file, run_as)
        command[1:1] = ["-u", run_as]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"postgresql://{user}@127.0.0.1:{port}/{server.get('dbname', 'postgres')}"
    try:
        _wait_until_up(url, process, folder)
        yield url
    finally:
        process.terminate()
        process.communicate(timeout=10)  # and its stderr pipe closed
        shutil.rmtree(folder, ignore_errors=True)


def _wait_until_up(url: str, process: subprocess.Popen[bytes], folder: Path) -> None:
    deadline = time.monotonic() + 15
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            log = folder / "pgbouncer.log"
            if process.poll() is not None or time.monotonic() > deadline:
                process.terminate()
                stderr = process.communicate(timeout=10)[1].decode()
                detail = log.read_text() if log.exists() else stderr
                pytest.fail(f"pgbouncer did not come up:\n{detail}")
            time.sleep(0.1)


def _admin(url: str, command: str) -> list[dict[str, Any]]:
    """A command of PgBouncer's admin console (the 'pgbouncer' database)."""
    params = psycopg.conninfo.conninfo_to_dict(url)
    params["dbname"] = "pgbouncer"
    admin = psycopg.conninfo.make_conninfo(**params)  # type: ignore[arg-type]
    with psycopg.connect(admin, autocommit=True, prepare_threshold=None) as conn:
        cur = conn.execute(command)
        names = [c.name for c in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


ITEMS: list[dict[str, Any]] = [
    {
        "id": f"p{n}",
        "text": text,
        "entities": entities,
        "mentioned_at": datetime(2023, 5, 1 + n, tzinfo=UTC),
        "tags": ["trip"] if n % 2 else [],
    }
    for n, (text, entities) in enumerate(
        [
            ("Melanie painted a lake at sunrise", ["Melanie"]),
            ("Caroline went to the support group in Portland", ["Caroline", "Portland"]),
            ("Melanie and Caroline planned a camping trip", ["Melanie", "Caroline"]),
            ("The camping trip was rained out in May", []),
            ("Caroline adopted a dog called Oscar", ["Caroline", "Oscar"]),
        ]
    )
]
QUERIES = [
    "What did Melanie paint?",
    "Who went to Portland?",
    "camping trip in May 2023",
    "Caroline's dog",
]


def test_debian_pgbouncer_needs_prepared_statements_off(bouncer: str) -> None:
    """The choice the engine's settings below rest on: no max_prepared_statements before
    1.21, so protocol-level prepared statements can't survive a transaction."""
    version = pgbouncer_version(pgbouncer_binary())
    config = {row["key"]: row["value"] for row in _admin(bouncer, "SHOW CONFIG")}
    assert config["pool_mode"] == "transaction"
    assert ("max_prepared_statements" in config) == (version >= (1, 21))


def test_retain_and_recall_through_pgbouncer_sync_and_async(
    settings: Settings, bouncer: str
) -> None:
    through = settings.with_overrides(
        {
            "database_url": bouncer,
            "prepared_statements": pgbouncer_version(pgbouncer_binary()) >= (1, 21),
            "pool_min_size": CLIENTS,
            "pool_max_size": CLIENTS,
        }
    )
    bank = f"bouncer-{os.getpid()}"
    with MemoryEngine(settings=through) as engine:  # bootstrap went through it too
        try:
            assert engine.retain(bank, ITEMS).created == len(ITEMS)
            # each query again and again: past psycopg's prepare threshold of 5
            expected = {q: [m.id for m in engine.recall(bank, q).memories] for q in QUERIES}
            for _ in range(3):
                for query in QUERIES:
                    assert [m.id for m in engine.recall(bank, query).memories] == expected[query]
            assert expected["What did Melanie paint?"][0] == "p0"
            asyncio.run(_async_calls(engine, bank, expected))
            assert engine.delete_bank(bank)
        finally:
            engine.delete_bank(bank)


async def _async_calls(engine: MemoryEngine, bank: str, expected: dict[str, list[str]]) -> None:
    try:
        more = {"id": "p9", "text": "Oscar the dog chased a ball", "entities": ["Oscar"]}
        await engine.aio.retain(bank, [more])
        await engine.aio.delete_memories(bank, ["p9"])
        rounds = 4
        asked = [q for _ in range(rounds) for q in QUERIES]  # more recalls than clients
        answers = await asyncio.gather(*(engine.aio.recall(bank, q) for q in asked))
        assert [[m.id for m in a.memories] for a in answers] == [expected[q] for q in asked]
        # the recalls' transactions took turns on fewer server connections than clients
        database = psycopg.conninfo.conninfo_to_dict(engine.database_url)["dbname"]
        servers = [
            r for r in _admin(engine.database_url, "SHOW SERVERS") if r["database"] == database
        ]
        clients = [
            r for r in _admin(engine.database_url, "SHOW CLIENTS") if r["database"] == database
        ]
        assert 0 < len(servers) <= SERVER_CONNECTIONS < CLIENTS <= len(clients)
    finally:
        await engine.aio.close()
