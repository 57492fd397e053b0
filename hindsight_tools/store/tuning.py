"""Server settings for the embedded PostgreSQL, which ``initdb`` leaves at tiny defaults.

With ``shared_buffers = 128MB`` a bank of 100k memories doesn't fit: every HNSW search of a
100k bank read ~30,000 pages back from the OS cache and the semantic arm took 2-3× longer
than with the data in shared buffers. The values here are written with ``ALTER SYSTEM`` (so
they live in the data directory's ``postgresql.auto.conf``) and applied by a reload; the
one that needs a restart (``shared_buffers``) is applied by restarting the server, but only
when no other process is using it, so a second process never pulls the server out from
under the first. An external server (``HINDSIGHT_API_DATABASE_URL``) is never touched.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import psutil
import psycopg
from psycopg import sql

_logger = logging.getLogger(__name__)
_MB = 1024 * 1024


def auto_shared_buffers() -> str:
    """An eighth of the machine's memory, between 128 MB and 1 GB.

    PostgreSQL's own advice for a dedicated server is a quarter; the embedded server shares
    the machine with the application and its models, so it takes half of that.
    """
    total = psutil.virtual_memory().total // _MB
    return f"{min(max(total // 8, 128), 1024)}MB"


def desired_settings(overrides: Mapping[str, str]) -> dict[str, str]:
    """The settings the embedded server runs with: the defaults below, then ``overrides``."""
    settings = {
        "shared_buffers": auto_shared_buffers(),
        # The planner's guess of the OS cache: with the default 4GB it already assumes a
        # warm cache; saying so explicitly keeps index scans preferred on small machines.
        "effective_cache_size": "4GB",
        # Recall statements are short and many; JIT compilation costs more than it saves.
        "jit": "off",
        # The graph arm sorts a few thousand candidates; 4MB made that sort spill to disk.
        "work_mem": "16MB",
        # The data of a local server is on local disk and mostly cached.
        "random_page_cost": "1.1",
    }
    settings.update({name: str(value) for name, value in overrides.items()})
    return settings


def apply_settings(conninfo: str, wanted: Mapping[str, str]) -> list[str]:
    """Write ``wanted`` with ALTER SYSTEM and reload; return the ones awaiting a restart."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        stored: dict[str, str] = dict(
            conn.execute(
                "SELECT name, setting FROM pg_file_settings "
                "WHERE sourcefile LIKE '%%postgresql.auto.conf' AND error IS NULL"
            ).fetchall()
        )
        changed = [name for name, value in wanted.items() if stored.get(name) != value]
        for name in changed:
            # ALTER SYSTEM takes no bind parameters; both parts are quoted by psycopg.
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(
                    sql.Identifier(name), sql.Literal(wanted[name])
                )
            )
        if changed:
            _logger.info("embedded PostgreSQL settings changed: %s", ", ".join(changed))
            conn.execute("SELECT pg_reload_conf()")
        # A reload applies everything but the settings read at server start; those are
        # compared by value ('1GB' = '1024MB'), since the reload's flags may not be set yet.
        restart = conn.execute(
            "SELECT name FROM pg_settings s JOIN unnest(%(names)s::text[], %(values)s::text[])"
            " AS w(name, value) USING (name) WHERE s.context = 'postmaster' AND NOT ("
            "  CASE WHEN s.unit LIKE '%%B'"
            "       THEN pg_size_bytes(current_setting(s.name)) = pg_size_bytes(w.value)"
            "       ELSE current_setting(s.name) = w.value END)",
            {"names": list(wanted), "values": list(wanted.values())},
        ).fetchall()
    return [str(name) for (name,) in restart]
