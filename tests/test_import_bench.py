"""The import benchmark end to end at a tiny size, in a scratch database of the session's
server."""

from __future__ import annotations

import re

from benchmarks.import_bench import main


def test_the_import_benchmark_reports_both_paths(scratch_db: str) -> None:
    report = main(
        ["--memories", "60", "--encoded", "20", "--batch", "25", "--database-url", scratch_db]
    )
    given = re.search(
        r"\| vectors given, into a store of 0 others \| 60 \| [\d.]+ \| ([\d,]+) \|", report
    )
    encoded = re.search(r"\| encoders in the path \| 20 \| [\d.]+ \| ([\d,]+) \|", report)
    alone = re.search(r"\| the encoders alone, same texts and batches \| 20 \|", report)
    assert given and encoded and alone, report
    share = re.search(r"run at \*\*(\d+)%\*\*", report)
    assert share and 0 < int(share.group(1)) <= 1000
    links = re.search(r"([\d,]+) semantic", report)
    assert links and int(links.group(1).replace(",", "")) > 0, report
    costs = dict(re.findall(r"^\| (a memory's row|its links)[^|]*\| (-?[\d.]+) \|$", report, re.M))
    assert set(costs) == {"a memory's row", "its links"}, report
    for needed in ("the HNSW index of every memory", "their two foreign keys", "all of the above"):
        assert needed in report
