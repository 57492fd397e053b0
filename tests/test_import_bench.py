"""The import benchmark end to end at a tiny size, in a scratch database of the session's
server."""

from __future__ import annotations

import re

import psycopg

from benchmarks.import_bench import main, write_steps
from hindsight_tools import MemoryEngine


def test_the_import_benchmark_reports_both_paths(scratch_db: str) -> None:
    report = main(
        ["--memories", "60", "--encoded", "20", "--batch", "25", "--database-url", scratch_db]
    )
    given = re.search(
        r"\| vectors given, into a store of 0 others \| 60 \| [\d.]+ \| ([\d,]+) \|", report
    )
    encoded = re.search(r"\| encoders in the path \| 20 \| [\d.]+ \| ([\d,]+) \|", report)
    encoded_aside = re.search(
        r"\| encoders in the path, search indexes set aside and built after the load, "
        r"into a store of 140 others \| 20 \|",
        report,
    )
    assert encoded_aside and "with the search indexes set aside, at **" in report, report
    deferred = re.search(
        r"\| vectors given, search indexes set aside and built after the load, into a "
        r"store of 80 others \| 60 \| [\d.]+ \| ([\d,]+) \|",
        report,
    )
    alone = re.search(r"\| the encoders alone, same texts and batches \| 20 \|", report)
    assert given and encoded and alone and deferred, report
    share = re.search(r"run at \*\*(\d+)%\*\*", report)
    assert share and 0 < int(share.group(1)) <= 1000
    links = re.search(r"([\d,]+) semantic", report)
    assert links and int(links.group(1).replace(",", "")) > 0, report
    costs = dict(re.findall(r"^\| (a memory's row|its links)[^|]*\| (-?[\d.]+) \|$", report, re.M))
    assert set(costs) == {"a memory's row", "its links"}, report
    for needed in ("the HNSW index of every memory", "its foreign keys", "all of the above"):
        assert needed in report


def test_the_write_steps_rebuild_every_key_and_index_of_the_real_tables(scratch_db: str) -> None:
    with MemoryEngine(scratch_db):  # migrates the empty database
        pass
    count = """
        SELECT (SELECT count(*) FROM pg_indexes WHERE tablename = %(t)s),
               (SELECT count(*) FROM pg_constraint
                WHERE conrelid = %(t)s::regclass AND contype IN ('p', 'f'))
    """
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        for source in ("memory_units", "memory_links"):
            copy = f"copy_of_{source}"  # a fixed name, never input
            conn.execute(f"CREATE TABLE {copy} AS SELECT * FROM {source} WHERE false")
            for _, statements in write_steps(conn, source):
                for statement in statements:
                    conn.execute(statement.replace("{table}", copy))
            assert (
                conn.execute(count, {"t": copy}).fetchone()
                == conn.execute(count, {"t": source}).fetchone()
            ), source
