"""Telling PostgreSQL's planner how big a bank is.

Every bank shares the same tables, and the planner estimates a bank's rows from the
statistics of the last ANALYZE. A bank written since then is one row to it, or the size of
an average bank, and it plans for that: the keyword arm's bounded form, past 20,000
postings, then sums the late terms once per candidate, and the semantic arm's choice
between an exact scan of the bank's rows and the HNSW graph rests on the same estimate
(docs/decisions/2026-12-06-keyword-arm-for-banks-without-statistics.md). By default
autovacuum analyses a table again only after a tenth of it has changed, so in a large
store a bank of tens of thousands of memories could stay unknown; the tables below are
analysed after a hundredth (migration ``0012``). An import large enough to matter ends by
analysing them itself (``HINDSIGHT_API_IMPORT_ANALYZE_MIN``), so the bank it wrote is
known at once; a retain is too small a write to.

ANALYZE reads a sample of each table, not the table: in a store of 1,000,000 memories and
70,000,000 links, about 10 s for these six. It runs after the import's last batch (and
after its indexes are built again, when they were set aside); if it fails, the import,
whose memories are committed, still succeeds, with a warning.
"""

from __future__ import annotations

from psycopg import sql

from hindsight_tools.runtime.plan import Plan, Statement

# The tables whose per-bank row counts the arms' plans depend on; fixed names, never input.
ANALYZED_TABLES = (
    "memory_units",
    "memory_terms",
    "bank_terms",
    "memory_links",
    "unit_entities",
    "entities",
)


def analyze_plan() -> Plan[None]:
    """One ANALYZE of :data:`ANALYZED_TABLES`."""
    tables = sql.SQL(", ").join(sql.Identifier(t) for t in ANALYZED_TABLES)
    yield Statement(sql.SQL("ANALYZE {}").format(tables), None, "none")
