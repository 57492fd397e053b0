"""The comparison's numbers as Markdown: the summary, per-category tables, and where peers win.

Pure functions over :class:`hindsight_tools.evaluation.Report`s, so the tables and the "who
wins where" sentences are unit-tested without running any system.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.scale import ScalePoint
from hindsight_tools.evaluation import Report, Score, aggregate

REFERENCE = "hindsight-tools"
NON_ADVERSARIAL = "non-adversarial"


NOTES = (
    "Every system gets each memory's turn text only (hindsight-tools also gets the turn's "
    "date, speaker metadata and its session as the chunk, as `hindsight-tools eval` gives "
    "them); the LangChain, LlamaIndex and BM25 peers have no notion of time (the reference "
    "server, when run, gets each turn's date and the question's time as well). Their "
    "tables have no vector index: a bank holds at most a few hundred memories, so "
    "PostgreSQL scans it exactly and the peers get their best possible dense recall. "
    "The peers' cross-encoders (the LlamaIndex postprocessor, the reference server's `onnx` "
    "provider) load the int8 ms-marco-MiniLM-L-12-v2 file of hindsight-tools' `onnx` "
    "reranker (the one its default picks offline; its line above names the reranker that "
    "ran), so they differ in what they rerank and how many, not in the model. "
    "Latency figures come from a shared 2-core machine (see the load averages below): "
    "compare systems within one run, not across runs.",
    "",
    "Not measured here: a bank of 1M memories. Retaining the 100k bank took about 27 minutes "
    "(66 memories/s with late interaction, `docs/benchmarks/recall-bench-100k.md`) and 5.1 GB "
    "on disk, so 1M would need at least 4.5 hours (retain slows as a bank grows) and 50 GB; "
    "the scale section stops at 100k.",
)


@dataclass(frozen=True)
class SystemRun:
    name: str
    description: str
    report: Report


@dataclass(frozen=True)
class Win:
    """A peer's recall@k above the reference system's on one slice of the questions."""

    slice: str
    k: int
    peer: str
    peer_recall: float
    reference_recall: float


def slices(report: Report) -> dict[str, Score]:
    """Category label -> score, in category order, then the non-adversarial overall."""
    named = {f"{score.name} ({score.category})": score for score in report.categories}
    return {**named, NON_ADVERSARIAL: report.overall_no_adversarial}


def wins(runs: Sequence[SystemRun], reference: str = REFERENCE) -> list[Win]:
    """Every (slice, k) where a peer's mean recall is strictly above the reference's."""
    base = next((run for run in runs if run.name == reference), None)
    if base is None:
        return []
    found = []
    base_slices = slices(base.report)
    for run in runs:
        if run.name == reference:
            continue
        for label, score in slices(run.report).items():
            theirs = base_slices.get(label)
            if theirs is None:
                continue
            for k in base.report.ks:
                mine, peer = theirs.recall.get(k), score.recall.get(k)
                if mine is not None and peer is not None and peer > mine:
                    found.append(Win(label, k, run.name, peer, mine))
    return found


def is_peer(name: str, reference: str = REFERENCE) -> bool:
    """Another system, not one of the reference's own configurations."""
    return not name.startswith(reference)


def lead_sentences(runs: Sequence[SystemRun], reference: str = REFERENCE) -> list[str]:
    """Where the peers stand against the reference, from the numbers: every question group
    and k a peer is ahead in (or that none is), then the closest peer at each k."""
    base = next((run for run in runs if run.name == reference), None)
    peers = [run for run in runs if is_peer(run.name, reference)]
    if base is None or not peers:
        return []
    ahead = [win for win in wins(runs, reference) if is_peer(win.peer, reference)]
    if ahead:
        by_peer: dict[str, dict[str, list[int]]] = {}
        for win in ahead:
            by_peer.setdefault(win.peer, {}).setdefault(win.slice, []).append(win.k)
        places = "; ".join(
            f"{peer} on "
            + ", ".join(
                f"{label} at " + "/".join(f"R@{k}" for k in ks) for label, ks in groups.items()
            )
            for peer, groups in by_peer.items()
        )
        first = f"Peers ahead of {reference}: {places}."
    else:
        first = f"No peer is ahead of {reference} in any question group at any k."
    mine = base.report.overall_no_adversarial.recall
    closest: dict[str, list[str]] = {}
    for k in base.report.ks:
        best = max(peers, key=lambda run: run.report.overall_no_adversarial.recall.get(k) or 0.0)
        theirs, ours = best.report.overall_no_adversarial.recall.get(k), mine.get(k)
        if theirs is not None and ours is not None:
            closest.setdefault(best.name, []).append(f"R@{k} {theirs:.3f} against {ours:.3f}")
    if not closest:
        return [first]
    best_peers = "; ".join(f"{name} ({', '.join(at)})" for name, at in closest.items())
    return [f"{first} Best peer on the non-adversarial questions: {best_peers}."]


def recall10_target(runs: Sequence[SystemRun], reference: str = REFERENCE) -> list[str]:
    """The quality bar: hindsight-tools ahead of every peer on non-adversarial R@10."""
    base = next((run for run in runs if run.name == reference), None)
    peers = [run for run in runs if is_peer(run.name, reference)]
    if base is None or not peers:
        return []
    mine = base.report.overall_no_adversarial.recall.get(10)
    best = max(peers, key=lambda run: run.report.overall_no_adversarial.recall.get(10) or 0.0)
    theirs = best.report.overall_no_adversarial.recall.get(10)
    if mine is None or theirs is None:
        return []
    verdict = "met" if mine > theirs else "**not met**"
    return [
        f"Target, {reference} ahead of every peer on non-adversarial R@10: {verdict} "
        f"({mine:.3f} against {theirs:.3f} for the best peer, {best.name})."
    ]


def _f(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    align = ["---"] + ["---:"] * (len(header) - 1)
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def summary_table(runs: Sequence[SystemRun]) -> list[str]:
    ks = runs[0].report.ks if runs else ()
    rows = []
    for run in runs:
        report = run.report
        score = report.overall_no_adversarial
        retain = report.retain
        rows.append(
            [
                f"**{run.name}**" if run.name == REFERENCE else run.name,
                *(_f(score.recall.get(k)) for k in ks),
                _f(report.latency.p50_ms, 1),
                _f(report.latency.p95_ms, 1),
                "n/a" if retain is None else f"{retain.per_second:.0f}",
            ]
        )
    return _table(
        ["system", *(f"R@{k}" for k in ks), "recall p50 ms", "recall p95 ms", "retain memories/s"],
        rows,
    )


def category_table(runs: Sequence[SystemRun], k: int) -> list[str]:
    """Systems as rows, categories (with their question counts) as columns, at one k."""
    if not runs:
        return []
    labels = list(slices(runs[0].report))
    counts = {label: score.questions for label, score in slices(runs[0].report).items()}
    rows = []
    for run in runs:
        mine = slices(run.report)
        cells = [_f(mine[label].recall.get(k)) if label in mine else "n/a" for label in labels]
        rows.append([run.name, *cells])
    return _table(["system", *(f"{label} n={counts[label]}" for label in labels)], rows)


def bank_table(runs: Sequence[SystemRun], k: int) -> list[str]:
    """Systems as rows, conversations as columns: non-adversarial recall@k within each, so
    a default chosen on some conversations can be read on the others."""
    if not runs:
        return []
    banks = list(dict.fromkeys(q.bank for q in runs[0].report.questions))
    rows = []
    for run in runs:
        cells = []
        for bank in banks:
            mine = [q for q in run.report.questions if q.bank == bank]
            score = aggregate(mine, run.report.ks).overall_no_adversarial
            cells.append(_f(score.recall.get(k)))
        rows.append([run.name, *cells])
    return _table(["system", *banks], rows)


def win_sentences(found: Sequence[Win]) -> list[str]:
    if not found:
        return [f"No peer is above {REFERENCE} in any category at any k."]
    by_slice: dict[tuple[str, str], list[Win]] = {}
    for win in found:
        by_slice.setdefault((win.slice, win.peer), []).append(win)
    return [
        f"- {label}: **{peer}** beats {REFERENCE} at "
        + ", ".join(f"R@{w.k} ({w.peer_recall:.3f} vs {w.reference_recall:.3f})" for w in wins_here)
        for (label, peer), wins_here in by_slice.items()
    ]


def _sample(limit: int | None, every: int, by_category: bool = False) -> str:
    if every == 1:
        taken = "every question"
    else:
        taken = f"every {every}th question of each " + ("category" if by_category else "bank")
    return taken if limit is None else f"{taken}, at most {limit} of each bank"


def render(
    runs: Sequence[SystemRun],
    *,
    command: str,
    data: Path,
    banks: Sequence[str],
    limit: int | None,
    every: int = 1,
    by_category: bool = False,
    facts: Mapping[str, str],
    versions: Mapping[str, str],
    images: Mapping[str, Path],
    scale: Sequence[ScalePoint],
) -> str:
    ks = runs[0].report.ks if runs else ()
    first = runs[0].report if runs else None
    questions = len(first.questions) if first else 0
    scored = first.overall_no_adversarial.questions if first else 0
    lines = [
        "# Benchmarks: hindsight-tools and its peers",
        "",
        "Generated by `benchmarks/compare.py`; do not edit by hand, run it again:",
        "",
        "```",
        command,
        "```",
        "",
        f"Data: `{data.name}` ({len(banks)} conversations: {', '.join(banks)}; "
        + _sample(limit, every, by_category)
        + f"; {questions} questions, {scored} non-adversarial with evidence). Metric: "
        "turn-level recall@k, |evidence ∩ dia_ids of the top k| / |evidence|, averaged; "
        "the adversarial category (LoCoMo's 5) is left out of the overall figure. Latency is "
        "the wall time of one recall call, query embedding included, after one untimed "
        "warm-up; retain throughput includes embedding every memory.",
        "",
        "## Summary (non-adversarial questions)",
        "",
        *summary_table(runs),
        "",
    ]
    if "recall" in images:
        lines += [f"![recall@k per system]({images['recall'].as_posix()})", ""]
    if "latency" in images:
        lines += [f"![recall latency per system]({images['latency'].as_posix()})", ""]
    lines += [*recall10_target(runs), ""]
    if lead := lead_sentences(runs):
        lines += [*lead, ""]
    found = wins(runs)
    ahead = [win for win in found if is_peer(win.peer)]
    own = [win for win in found if not is_peer(win.peer)]
    lines += ["## Where a peer is ahead", "", *win_sentences(ahead), ""]
    if own:
        lines += [
            f"{REFERENCE}'s own other configurations above its default:",
            "",
            *win_sentences(own),
            "",
        ]
    lines += ["## Per conversation (recall@10, non-adversarial)", "", *bank_table(runs, 10), ""]
    lines += ["## Per category", ""]
    for k in ks:
        lines += [f"### recall@{k}", "", *category_table(runs, k), ""]
    lines += ["## The systems", ""]
    lines += [f"- **{run.name}**: {run.description}" for run in runs]
    lines += ["", *NOTES, ""]
    if scale:
        lines += scale_section(scale, images.get("scale"))
    lines += ["## Machine and versions", ""]
    lines += [f"- {name}: {value}" for name, value in facts.items()]
    lines += [f"- {name} {version}" for name, version in versions.items()]
    return "\n".join(lines) + "\n"


def scale_section(points: Sequence[ScalePoint], image: Path | None) -> list[str]:
    rows = [
        [
            f"{p.size:,}",
            p.reranker,
            _f(p.recall_p50_ms, 1),
            _f(p.recall_p95_ms, 1),
            _f(p.floor_p50_ms, 1),
            _f(p.floor_p95_ms, 1),
            f"{p.recall_p50_ms / p.floor_p50_ms:.0f}×" if p.floor_p50_ms else "n/a",
        ]
        for p in points
    ]
    commands = list(dict.fromkeys(p.command for p in points))
    lines = [
        "## Recall latency against bank size",
        "",
        "Synthetic banks from `benchmarks/recall_bench.py` (its reports hold the details); "
        "hindsight-tools recall at budget mid against one pgvector kNN query (`ORDER BY "
        "embedding <=> q LIMIT 20`, bank-filtered): the floor any recall pays.",
        "",
        *_table(
            [
                "memories in the bank",
                "reranker",
                "recall mid p50 ms",
                "p95 ms",
                "kNN floor p50 ms",
                "p95 ms",
                "mid / floor (p50)",
            ],
            rows,
        ),
        "",
        "Measured by:",
        "",
        *(f"- `{command}`" for command in commands),
        "",
        "Read from: "
        + ", ".join(f"`{source}`" for source in dict.fromkeys(p.source for p in points))
        + ".",
        "",
    ]
    if image is not None:
        lines += [f"![recall latency against bank size]({image.as_posix()})", ""]
    return lines
