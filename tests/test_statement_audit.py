"""Every statement the engine sends stays inside one bank (docs/scaling.md).

The engine runs every call (retain, recall with each arm and filter, the reads, the
deletes, the backfill) on connections whose statements the server logs
(``log_statement = all``, set for those connections only through their startup options);
the log is then read back and each statement parsed by PostgreSQL's own parser
(:mod:`tests.sql_audit`). Left out, with reason: statements that touch no bank table
(transaction control, ``SET LOCAL``, advisory locks, the schema records of bootstrap),
and DDL, which only migrations run: once per store, over whole tables, and on a sharded
server from the coordinator, which applies it to every shard.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pglast import ast, parse_sql
from pgvector.psycopg import register_vector

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.models import FACT_TYPES
from hindsight_tools.recall.arms.bm25 import (
    Bm25Backend,
    KeywordQuery,
    NativeBackend,
    rarest_terms,
)
from hindsight_tools.recall.arms.filters import Scope
from hindsight_tools.recall.arms.graph import GraphQuery, graph_plan
from hindsight_tools.runtime.plan import Cancelled, Plan, run_plan
from hindsight_tools.store.embedded import acquire_server, pgdata_for
from tests.conftest import TEST_DATABASE_URL
from tests.sql_audit import touches_bank_tables, unpinned

# each entry of the server's log starts with log_line_prefix ('%m [%p] ')
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[\d+\] ", re.M)
_STATEMENT = re.compile(r"^LOG:\s+(?:statement|execute [^:]+): (.*)\Z", re.S)
_DML = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)


@pytest.fixture(scope="module")
def server_log(engine: MemoryEngine, settings: Settings) -> Iterator[tuple[str, Path]]:
    """A server whose log this test can read, and that log: the session's embedded server,
    or, when the session runs on a database of its own, an embedded one started here."""
    if TEST_DATABASE_URL is None:
        yield engine.database_url, pgdata_for(settings.data_dir) / "log"
        return
    own = Path(tempfile.mkdtemp(prefix="ht-audit-", dir="/tmp"))
    server = acquire_server(own)
    try:
        yield server.uri, server.pgdata / "log"
    finally:
        server.release()


def _logged(url: str) -> str:
    params = psycopg.conninfo.conninfo_to_dict(url)
    params["options"] = "-c log_statement=all"
    return psycopg.conninfo.make_conninfo(**params)  # type: ignore[arg-type]


def _statements(log: Path, offset: int) -> list[str]:
    text = log.read_bytes()[offset:].decode(errors="replace")
    entries = _ENTRY.split(text)
    return [m.group(1).strip() for e in entries if (m := _STATEMENT.match(e.strip()))]


ITEMS: list[dict[str, Any]] = [
    {
        "id": "a1",
        "text": "Melanie painted a lake at sunrise in Portland",
        "entities": ["Melanie", "Portland"],
        "document_id": "journal",
        "chunk": "Melanie painted a lake at sunrise. She took the bus home.",
        "tags": ["art"],
        "metadata": {"mood": "calm", "n": 1},
        "occurred_start": datetime(2023, 5, 7, 9, tzinfo=UTC),
    },
    {
        "id": "a2",
        "text": "Caroline went to the support group in Portland",
        "document_id": "journal",  # read after a1 too
        "mentioned_at": datetime(2023, 5, 8, 12, tzinfo=UTC),
        "causal_links": [{"target_id": "a1", "link_type": "caused_by", "weight": 0.6}],
    },
    {
        "id": "a3",
        "text": "Melanie and Caroline planned a camping trip",
        "fact_type": "experience",
        "tags": ["trip"],
        "mentioned_at": datetime(2023, 5, 8, 13, tzinfo=UTC),
    },
]
FILTERS: dict[str, Any] = {
    "tags": ["art"],
    "tags_match": "all_strict",
    "metadata_filter": {"mood": "calm", "n": {"$gte": 1}},
    "occurred_after": datetime(2023, 1, 1, tzinfo=UTC),
    "occurred_before": datetime(2024, 1, 1, tzinfo=UTC),
}


def _run_everything(engine: MemoryEngine, url: str, bank: str) -> None:
    engine.retain(bank, ITEMS)
    engine.retain(bank, ITEMS[:2])  # again: the paths that replace a memory's rows
    imported = [{**item, "id": f"imported-{item['id']}"} for item in ITEMS]
    imported[0]["embedding"] = [0.01] * 384
    engine.import_memories(bank, imported, batch_size=2)
    engine.import_memories(bank, imported)  # again: every id skipped
    for options in ({}, {"include_chunks": True, "budget": "high"}, FILTERS):
        engine.recall(bank, "What did Melanie paint in May 2023?", **options)
        engine.recall(bank, "Who went to Portland?", types=["world"], **options)
    asyncio.run(_recall_async(engine, bank))
    _run_plans_a_recall_rarely_reaches(url, bank)
    engine.get_memories(bank, ["a1", "a2", "missing"])
    engine.list_memories(bank)
    engine.list_memories(bank, types=["world"], limit=1, offset=1, **FILTERS)
    engine.list_memories(bank, order="updated_at", tags=["t1"], tags_match="all_strict")
    engine.list_tags(bank)
    engine.list_tags(bank, prefix="t")
    engine.backfill_token_vectors(bank)
    engine.delete_memories(bank, ["a2"])
    engine.delete_document(bank, "journal")
    engine.delete_bank(bank)


async def _recall_async(engine: MemoryEngine, bank: str) -> None:
    try:
        await engine.aio.recall(bank, "camping with Caroline last May", **FILTERS)
    finally:
        await engine.aio.close()


def _run_plans_a_recall_rarely_reaches(url: str, bank: str) -> None:
    """The native keyword backend, BM25's bounded form (its bound set to 0, so that a bank
    of six takes it), and the graph arm's query without entities (what it falls back to
    past its time limit), run directly."""
    with psycopg.connect(url) as conn:
        register_vector(conn)
        row = conn.execute(
            "SELECT embedding FROM memory_units WHERE bank_id = %s LIMIT 1", (bank,)
        ).fetchone()
        assert row is not None
        vector: np.ndarray[Any, Any] = row[0]
        scope = Scope(tags=["art"], metadata=None)
        native = KeywordQuery(bank, "Melanie lake", tuple(FACT_TYPES), scope, 10, "english")
        run_plan(conn, NativeBackend().plan(native))
        bounded = KeywordQuery(
            bank, "Melanie painted lake", tuple(FACT_TYPES), scope, 10, "english"
        )
        # both bounded forms: the rarest term past the bound (its candidates cut), and
        # within it (the other terms late)
        ranked = run_plan(conn, rarest_terms(bounded))
        assert len(ranked) > 1  # a late term for the second form
        for bound in (0, ranked[0][1]):
            run_plan(conn, Bm25Backend(exact_postings=bound).plan(bounded))
        graph = GraphQuery(bank, vector, ("Melanie",), ("world",), scope, 10, 0.0, 10, 5.0, "idf")
        run_plan(conn, _as_if_cancelled(graph_plan(graph)))


def _as_if_cancelled(plan: Plan[Any]) -> Plan[Any]:
    """``plan`` with each cancellable statement answered as if it hit its time limit."""
    stmt = next(plan)
    while True:
        rows = Cancelled() if stmt.cancellable else (yield stmt)
        try:
            stmt = plan.send(rows)
        except StopIteration as done:
            return done.value


def test_every_statement_of_every_call_stays_in_its_bank(
    settings: Settings, server_log: tuple[str, Path]
) -> None:
    url, log = server_log
    audited = settings.with_overrides(
        # the HNSW path of semantic links too, not only the exact one of small banks
        {"database_url": _logged(url), "semantic_link_exact_max_units": 0}
    )
    offset = log.stat().st_size
    with MemoryEngine(settings=audited) as engine:
        _run_everything(engine, _logged(url), "audit-bank")
    statements = _statements(log, offset)

    audited_dml = [
        s
        for s in statements
        if touches_bank_tables(s) and all(isinstance(r.stmt, _DML) for r in parse_sql(s))
    ]
    # the log really holds the calls: each table written and read, each kind of statement
    text = "\n".join(audited_dml)
    for expected in (
        "INSERT INTO memory_links",
        "UPDATE entities",
        "FROM unit_entities",
        "bank_terms",
        "memory_token_vectors",
        "tstzrange",  # the temporal arm and the date filter
        "metadata_doc",  # the metadata filter
        "ts_rank_cd",  # the native keyword backend
        "ARRAY(SELECT id FROM found)",  # BM25's bounded forms
        "LIMIT greatest(",  # the one whose candidates are cut
        "DELETE FROM banks",
        "DELETE FROM memory_links WHERE bank_id = $1",  # delete_bank's, links having no keys
        "OR to_unit_id = ANY($",  # forgetting's, both ways
        "FROM hindsight_import_stage",  # the bulk path
    ):
        assert expected in text, f"no statement with {expected!r} in the server's log"
    assert len(audited_dml) > 60
    problems = [(tables, s) for s in audited_dml if (tables := unpinned(s))]
    if problems:
        pytest.fail(
            "statements not pinned to one bank:\n\n"
            + "\n\n".join(f"{tables}:\n{s}" for tables, s in problems)
        )


@pytest.mark.parametrize(
    ("statement", "tables"),
    [
        # the mention count and the entity names before the keys included the bank
        (
            "UPDATE entities e SET mention_count = (SELECT count(*) FROM unit_entities ue"
            " WHERE ue.entity_id = e.id) WHERE e.bank_id = $1",
            ["unit_entities"],
        ),
        (
            "SELECT m.id, (SELECT array_agg(e.canonical_name) FROM unit_entities ue"
            " JOIN entities e ON e.id = ue.entity_id"
            " WHERE ue.bank_id = m.bank_id AND ue.unit_id = m.id)"
            " FROM memory_units m WHERE m.bank_id = $1",
            ["entities"],
        ),
        # one side of an OR doesn't pin anything
        (
            "SELECT id FROM memory_units m WHERE ($1::text IS NULL OR m.bank_id = $1)",
            ["memory_units"],
        ),
        ("SELECT bank_id FROM banks", ["banks"]),
        ("INSERT INTO bank_terms (term, df) VALUES ($1, 1)", ["bank_terms"]),
        # joined on the bank to a pinned row, correlated, or through a CTE: pinned
        (
            "SELECT 1 FROM memory_links l JOIN memory_units m ON m.bank_id = l.bank_id"
            " AND m.id = l.to_unit_id WHERE l.bank_id = $1",
            [],
        ),
        (
            "DELETE FROM chunks c WHERE c.bank_id = $1 AND NOT EXISTS (SELECT 1 FROM"
            " memory_units m WHERE m.bank_id = c.bank_id AND m.chunk_id = c.chunk_id)",
            [],
        ),
        (
            "WITH gone AS (DELETE FROM memory_terms WHERE bank_id = $1 RETURNING term)"
            " UPDATE bank_terms b SET df = b.df - 1 FROM gone WHERE b.bank_id = $1",
            [],
        ),
    ],
)
def test_the_audit_tells_a_pinned_statement_from_one_that_is_not(
    statement: str, tables: list[str]
) -> None:
    assert unpinned(statement) == tables
