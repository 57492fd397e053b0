"""The scale benchmark's Markdown report, from what a run measured."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.recall_bench_data import NOW
from benchmarks.recall_bench_report import _short_vectors, _table, latency_section
from benchmarks.recall_bench_timing import BankLatency, ms, percentile
from benchmarks.scale_store import TOKEN_POOL, BuildTimes

P95_TARGET_MS = 250.0
# "Index Scan using X on t", "Index Only Scan using X", "Bitmap Index Scan on X"
_INDEX_READ = re.compile(
    r"(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)"
)
_EXECUTION = re.compile(r"Execution Time: ([\d.]+) ms")


@dataclass
class ArmPlan:
    arm: str
    question: str
    lines: list[str]

    @property
    def indexes(self) -> list[str]:
        return sorted({m.group(1) for line in self.lines for m in _INDEX_READ.finditer(line)})

    @property
    def executions(self) -> list[float]:
        """Execution time of each statement the arm ran, ms."""
        return [float(m.group(1)) for line in self.lines if (m := _EXECUTION.search(line))]

    @property
    def sequential(self) -> list[str]:
        """Tables the plan reads whole."""
        return sorted(
            {m.group(1) for line in self.lines if (m := re.search(r"Seq Scan on (\w+)", line))}
        )


@dataclass
class Writes:
    size: int
    retain: list[float] = field(default_factory=list)
    delete: list[float] = field(default_factory=list)


@dataclass
class ShapeRun:
    name: str
    banks: int
    memories: int
    bank: str
    bank_size: int
    build: BuildTimes
    latency: dict[str, BankLatency]  # reranker -> measurements
    plans: list[ArmPlan]
    writes: Writes
    disk: dict[str, int]
    counts: dict[str, int]
    tables: int
    indexes: int
    schema_differences: list[str]
    facts: dict[str, str]


def _mid(result: BankLatency, q: float) -> float:
    return percentile([s.wall for s in result.recall["mid"]], q)


def _gb(size: int) -> str:
    return f"{size / 1024**3:.2f} GB" if size >= 1024**3 else f"{size / 1024**2:.1f} MB"


def summary(runs: Sequence[ShapeRun]) -> list[str]:
    rerankers = list(dict.fromkeys(r for run in runs for r in run.latency))
    header = ["store", "banks", "memories", "measured bank"]
    for reranker in rerankers:
        header += [f"mid p50 ({reranker})", f"mid p95 ({reranker})"]
    header += ["kNN floor p50", "disk"]
    rows = []
    for run in runs:
        row = [run.name, f"{run.banks:,}", f"{run.memories:,}", f"{run.bank} ({run.bank_size:,})"]
        for reranker in rerankers:
            result = run.latency.get(reranker)
            row += [ms(_mid(result, 50)), ms(_mid(result, 95))] if result else ["–", "–"]
        floor = next(iter(run.latency.values())).floor
        row += [ms(percentile(floor, 50)), _gb(run.disk["database"])]
        rows.append(row)
    return _table(header, rows)


def verdicts(runs: Sequence[ShapeRun]) -> list[str]:
    lines = []
    for run in runs:
        if run.name == "alone" or "passthrough" not in run.latency:
            continue
        p95 = _mid(run.latency["passthrough"], 95) * 1000
        met = "met" if p95 < P95_TARGET_MS else "NOT met"
        lines.append(
            f"- {run.name}: mid p95 with passthrough {p95:.1f} ms, "
            f"target < {P95_TARGET_MS:.0f} ms: **{met}**."
        )
    by_name = {run.name: run for run in runs}
    shared, alone = by_name.get("many-small"), by_name.get("alone")
    if shared is not None and alone is not None:
        for reranker in shared.latency:
            if reranker not in alone.latency:
                continue
            a, b = shared.latency[reranker], alone.latency[reranker]
            lines.append(
                f"- a bank of {shared.bank_size} among {shared.banks:,} against the same bank "
                f"alone ({reranker}): mid p50 {ms(_mid(a, 50))} vs {ms(_mid(b, 50))} ms "
                f"({_mid(a, 50) / _mid(b, 50):.2f}×), p95 {ms(_mid(a, 95))} vs "
                f"{ms(_mid(b, 95))} ms ({_mid(a, 95) / _mid(b, 95):.2f}×)."
            )
    counts = {(run.tables, run.indexes) for run in runs}
    listing = ", ".join(f"{run.name} {run.tables} tables and {run.indexes} indexes" for run in runs)
    same = "equal in every store" if len(counts) == 1 else "NOT equal in every store"
    lines.append(f"- tables and indexes: {listing}: {same}, whatever the number of banks.")
    for run in runs:
        verdict = (
            "the same indexes and constraints as a database migrated afresh"
            if not run.schema_differences
            else f"DIFFERS from a database migrated afresh: {'; '.join(run.schema_differences)}"
        )
        lines.append(f"- {run.name} after its build: {verdict}.")
    return lines


def build_section(runs: Sequence[ShapeRun]) -> list[str]:
    header = [
        "store",
        "rows",
        "vector indexes",
        "links",
        "token vectors",
        "link indexes and keys",
        "vacuum",
        "total",
        "memories/s",
    ]
    rows = []
    for run in runs:
        b = run.build
        rate = f"{run.memories / b.total:.0f}" if b.total else "–"
        cells = [
            f"{s:.0f}"
            for s in (
                b.rows,
                b.vector_indexes,
                b.links,
                b.token_vectors,
                b.link_indexes,
                b.vacuum,
                b.total,
            )
        ]
        rows.append([run.name + (" (built by an earlier run)" if b.reused else ""), *cells, rate])
    return [*_table(header, rows), "", "Seconds of each pass (`benchmarks/scale_store.py`)."]


def shape_section(run: ShapeRun) -> list[str]:
    lines = [f"## {run.name}: {run.banks:,} banks, {run.memories:,} memories", ""]
    for reranker, result in run.latency.items():
        lines += [f"Reranker **{reranker}**:", "", *latency_section(result)]
    lines += ["### Each arm's query (EXPLAIN ANALYZE, budget mid)", ""]
    lines += _table(
        ["arm", "indexes read", "tables read whole", "statements", "execution ms (sum)"],
        [
            [
                p.arm,
                ", ".join(f"`{i}`" for i in p.indexes) or "none",
                ", ".join(p.sequential) or "none",
                str(len(p.executions)),
                f"{sum(p.executions):.1f}" if p.executions else "–",
            ]
            for p in run.plans
        ],
    )
    w = run.writes
    lines += [
        "",
        "### Writes and disk",
        "",
        f"- retain of {w.size} memories into a fresh bank (composite vectors, the real "
        f"late-interaction model), {len(w.retain)} banks: "
        + ", ".join(f"{s * 1000:.0f}" for s in w.retain)
        + " ms",
        "- `delete_bank` of each: " + ", ".join(f"{s * 1000:.0f}" for s in w.delete) + " ms",
        "- rows: " + ", ".join(f"{n:,} {name}" for name, n in run.counts.items()),
        f"- database {_gb(run.disk['database'])}; "
        + ", ".join(f"{t} {_gb(s)}" for t, s in run.disk.items() if t != "database"),
        "",
    ]
    for plan in run.plans:
        lines += [
            f"<details><summary>{plan.arm} arm plan</summary>",
            "",
            f"Question: {plan.question}",
            "",
            "```",
        ]
        lines += [*map(_short_vectors, plan.lines), "```", "", "</details>", ""]
    return lines


def render(command: str, runs: Sequence[ShapeRun], warm_up: int) -> str:
    facts = runs[0].facts if runs else {}
    lines = [
        "# Scale benchmark",
        "",
        f"`{command}`",
        "",
        *(f"- {k}: {v}" for k, v in facts.items()),
        f"- questions asked at {NOW.isoformat()}; synthetic memories and composite vectors "
        "(`benchmarks/recall_bench.py`); stores built in passes (`benchmarks/scale_store.py`), "
        + (
            f"late-interaction vectors and each memory's reading in context copied from a "
            f"pool of {TOKEN_POOL:,} real encodings"
            if any(run.counts.get("token vectors") for run in runs)
            else "without late-interaction vectors"
        ),
        "- each store is measured with passthrough first, then with the cross-encoder, "
        f"each after a round of {warm_up} other questions about the same bank (untimed, at "
        "mid, with no statement time limit) and its own warm-up of 10, with the benchmark's "
        "own generated memories frozen out of Python's garbage collector (`gc.freeze`): a "
        "full collection over them would otherwise land inside a recall",
        "",
        "## Summary",
        "",
        *summary(runs),
        "",
        *verdicts(runs),
        "",
        "## Building the stores",
        "",
        *build_section(runs),
        "",
    ]
    for run in runs:
        lines += shape_section(run)
    return "\n".join(lines)
