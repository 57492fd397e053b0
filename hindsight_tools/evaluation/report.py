"""The pure layer of an evaluation: recall@k, latency percentiles, the :class:`Report` of a
run and its Markdown (:func:`format_report`); nothing here touches a store or a model.

The metric (see the data's README): for a question with evidence ``E`` (``dia_id``s) and the
``dia_id``s of the top ``k`` recalled memories ``R``, recall@k = |E ∩ R| / |E|. Questions
without evidence cannot be scored and are counted apart.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_KS: tuple[int, ...] = (5, 10, 20, 50)
# Questions left out of the "no adversarial" figures go by this name, not by number: LoCoMo
# numbers its adversarial category 5, other data sets (BEAM's instruction following) use 5
# for questions that must be counted.
ADVERSARIAL_NAME = "adversarial"
# LoCoMo's categories; the data's own ``category_name`` wins when present.
CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


def recall_at_k(evidence: Sequence[str], ranked_dia_ids: Sequence[str | None], k: int) -> float:
    """|set(evidence) ∩ set(ranked_dia_ids[:k])| / |set(evidence)|.

    ``None`` in the ranking is a memory without a ``dia_id`` (it takes a slot, matches nothing).
    Sets on both sides: a turn named twice in the evidence, or recalled twice, counts once.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall@k is undefined without evidence")
    return len(wanted.intersection(ranked_dia_ids[:k])) / len(wanted)


def latency_percentiles(seconds: Sequence[float]) -> tuple[float, float] | None:
    """(p50, p95) of ``seconds``, or ``None`` when empty.

    ``statistics.quantiles(method="inclusive")`` interpolates linearly between order statistics,
    the same as ``numpy.percentile``'s default, so numbers compare with numpy-based tools.
    """
    if not seconds:
        return None
    if len(seconds) == 1:  # quantiles() needs two points; one point is every percentile
        return seconds[0], seconds[0]
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return cuts[49], cuts[94]


class QuestionResult(BaseModel):
    """One question as asked: its evidence, the ranked ``dia_id``s (top max k) and wall time."""

    model_config = ConfigDict(frozen=True)

    bank: str
    qid: str
    category: int
    category_name: str
    evidence: tuple[str, ...]
    ranked: tuple[str | None, ...]
    seconds: float
    stages: dict[str, float] = Field(default_factory=dict)


class Score(BaseModel):
    """Mean recall@k over ``questions`` (those with evidence); ``skipped`` had none.

    ``recall`` is ``k -> mean``; ``None`` when no question here had evidence.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    category: int | None = None
    questions: int
    skipped: int
    recall: dict[int, float | None]


class Latency(BaseModel):
    model_config = ConfigDict(frozen=True)

    recalls: int
    p50_ms: float | None
    p95_ms: float | None
    # per pipeline stage (embed, arms, fusion, rerank, scoring, token_filter): p50 in ms
    stages_p50_ms: dict[str, float] = Field(default_factory=dict)


class RetainStats(BaseModel):
    model_config = ConfigDict(frozen=True)

    memories: int
    seconds: float
    # memories whose text was longer than the store takes (HINDSIGHT_API_RETAIN_MAX_TEXT_CHARS)
    cut: int = 0

    @property
    def per_second(self) -> float:
        return self.memories / self.seconds if self.seconds > 0 else 0.0


class Report(BaseModel):
    """Everything one evaluation run measured; :meth:`to_json` for machines."""

    model_config = ConfigDict(frozen=True)

    ks: tuple[int, ...]
    categories: list[Score]
    overall: Score
    overall_no_adversarial: Score
    latency: Latency
    retain: RetainStats | None = None
    questions: list[QuestionResult]

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.model_validate_json(text)


def _score(
    name: str, rows: Sequence[QuestionResult], ks: Sequence[int], category: int | None = None
) -> Score:
    scored = [row for row in rows if row.evidence]
    recall: dict[int, float | None] = {
        k: (
            statistics.fmean(recall_at_k(row.evidence, row.ranked, k) for row in scored)
            if scored
            else None
        )
        for k in ks
    }
    return Score(
        name=name,
        category=category,
        questions=len(scored),
        skipped=len(rows) - len(scored),
        recall=recall,
    )


def aggregate(
    rows: Iterable[QuestionResult],
    ks: Sequence[int] = DEFAULT_KS,
    *,
    retain: RetainStats | None = None,
) -> Report:
    """Mean recall@k per category (in category order), overall, and overall without
    adversarial questions; latency percentiles over every recall (scored or not)."""
    rows = list(rows)
    by_category: dict[int, list[QuestionResult]] = {}
    for row in rows:
        by_category.setdefault(row.category, []).append(row)
    categories = [
        _score(members[0].category_name, members, ks, category)
        for category, members in sorted(by_category.items())
    ]
    ordinary = [row for row in rows if row.category_name != ADVERSARIAL_NAME]
    percentiles = latency_percentiles([row.seconds for row in rows])
    p50, p95 = percentiles if percentiles is not None else (None, None)
    return Report(
        ks=tuple(ks),
        categories=categories,
        overall=_score("overall", rows, ks),
        overall_no_adversarial=_score("overall (no adversarial)", ordinary, ks),
        latency=Latency(
            recalls=len(rows),
            p50_ms=None if p50 is None else p50 * 1000,
            p95_ms=None if p95 is None else p95 * 1000,
            stages_p50_ms=_stage_medians(rows),
        ),
        retain=retain,
        questions=rows,
    )


def _stage_medians(rows: Sequence[QuestionResult]) -> dict[str, float]:
    names = dict.fromkeys(name for row in rows for name in row.stages if name != "total")
    return {
        name: statistics.median(row.stages[name] for row in rows if name in row.stages) * 1000
        for name in names
    }


# --------------------------------------------------------------------------- formatting


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row(score: Score, ks: Sequence[int]) -> str:
    label = score.name if score.category is None else f"{score.name} ({score.category})"
    cells = " | ".join(_cell(score.recall.get(k)) for k in ks)
    return f"| {label} | {score.questions} | {cells} |"


def format_report(report: Report) -> str:
    """A Markdown table of mean recall@k, then latency, retain throughput and skipped counts."""
    ks = report.ks
    lines = [
        "| category | questions | " + " | ".join(f"R@{k}" for k in ks) + " |",
        "|---|---:|" + "---:|" * len(ks),
    ]
    lines += [_row(score, ks) for score in report.categories]
    lines.append(_row(report.overall, ks))
    lines.append(_row(report.overall_no_adversarial, ks))
    lines.append("")
    latency = report.latency
    if latency.p50_ms is None or latency.p95_ms is None:
        lines.append("latency: no recalls")
    else:
        lines.append(
            f"latency: p50 {latency.p50_ms:.1f} ms, p95 {latency.p95_ms:.1f} ms "
            f"over {latency.recalls} recalls"
        )
        if latency.stages_p50_ms:
            lines.append(
                "stage p50: "
                + ", ".join(f"{k} {v:.1f} ms" for k, v in latency.stages_p50_ms.items())
            )
    if report.retain is None:
        lines.append("retain: skipped (banks reused)")
    else:
        lines.append(
            f"retain: {report.retain.memories} memories in {report.retain.seconds:.1f} s "
            f"({report.retain.per_second:.1f} memories/s)"
            + (f", {report.retain.cut} cut to the store's text limit" if report.retain.cut else "")
        )
    if report.overall.skipped:
        lines.append(f"{report.overall.skipped} question(s) without evidence not scored")
    return "\n".join(lines)
