"""Cross-encoder cost on this machine: ms per (query, memory) pair for the ONNX reranker.

Compares, in one run on the same pairs, the model fed as its tokenizer ships (every pair
padded to 512 tokens) with our per-group dynamic padding, one against two onnxruntime
threads, and groups of 4, 8 and 16 similar-length pairs when a call brings ``--depth`` pairs,
as a recall does. The pairs are real LoCoMo memories with the date prefix a recall adds.

    .venv/bin/python benchmarks/rerank_bench.py --dataset DIR [--pairs 64] [--depth 24]

``--dataset`` is the LoCoMo folder (its ``memories.jsonl``); without it,
``$HINDSIGHT_LOCOMO_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from datetime import datetime
from pathlib import Path

import numpy as np

from hindsight_tools.recall.rerank.base import rerank_document
from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder

LOCOMO_VARIABLE = "HINDSIGHT_LOCOMO_DIR"  # the LoCoMo data is not in the repository
QUERY = "What did Caroline research?"
GROUPS = (4, 8, 16)


def documents(dataset: Path, count: int) -> list[str]:
    docs = []
    with (dataset / "memories.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            when = datetime.fromisoformat(record["occurred_at"])
            docs.append(rerank_document(record["text"], None, when))
            if len(docs) == count:
                break
    return docs


def padded_to_512(reranker: OnnxCrossEncoder, docs: list[str]) -> float:
    """The shipped behaviour: every pair padded to the tokenizer's fixed 512."""
    tokenizer = reranker._tokenizer
    tokenizer.enable_padding(length=512)
    try:
        started = time.perf_counter()
        for start in range(0, len(docs), 32):
            encodings = tokenizer.encode_batch([(QUERY, d) for d in docs[start : start + 32]])
            reranker._session.run(None, reranker._feed(encodings))
        return time.perf_counter() - started
    finally:
        tokenizer.no_padding()


def timed(reranker: OnnxCrossEncoder, docs: list[str], repeats: int = 3) -> float:
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        reranker.score(QUERY, docs)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--depth", type=int, default=24, help="pairs per call for the group rows")
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
    both = OnnxCrossEncoder(threads=0)
    one = OnnxCrossEncoder(threads=1)
    tokens = [len(e.ids) for e in both._tokenizer.encode_batch([(QUERY, d) for d in docs])]
    both.score(QUERY, docs[:4])  # first-run allocations are not part of any figure
    rows = [
        ("as shipped: padded to 512, batches of 32", padded_to_512(both, docs)),
        ("dynamic padding per length group, all cores", timed(both, docs)),
        ("dynamic padding per length group, one thread", timed(one, docs)),
    ]
    # A recall scores its head in one call of ``--depth`` pairs; how large a group of
    # similar-length pairs onnxruntime should get at a time is measured that way.
    for group in GROUPS:
        grouped = OnnxCrossEncoder(threads=0, length_group=group)
        grouped.score(QUERY, docs[:4])
        rows.append(
            (
                f"groups of {group}, {args.depth} pairs a call, all cores",
                sum(
                    timed(grouped, docs[i : i + args.depth])
                    for i in range(0, len(docs), args.depth)
                ),
            )
        )
    print(
        f"{len(docs)} pairs, {np.mean(tokens):.0f} tokens on average (max {max(tokens)}); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print("| feeding | seconds | ms per pair |\n|---|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} | {seconds / len(docs) * 1000:.1f} |")


if __name__ == "__main__":
    main()
