"""The ``hindsight-tools`` command: demo, retain, recall, memories, eval, mcp."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, get_args

from hindsight_tools.cli.format import format_result
from hindsight_tools.cli.memories import add_memories_parser, json_object, run_memories
from hindsight_tools.errors import HindsightError
from hindsight_tools.evaluation.run import RETAIN_BATCH
from hindsight_tools.models import FACT_TYPES, Budget, TagsMatch
from hindsight_tools.recall.arms.base import ARM_ORDER
from hindsight_tools.settings import Settings

BUDGETS: tuple[Budget, ...] = get_args(Budget)
TAGS_MATCHES: tuple[TagsMatch, ...] = get_args(TagsMatch)


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``; argparse prefixes the flag's name."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            message = f"must be an integer >= {minimum}, got {text!r}"
            raise argparse.ArgumentTypeError(message) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


positive_int = _int_at_least(1)
non_negative_int = _int_at_least(0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hindsight-tools", description="Long-term memory for agents: retain and recall."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="retain a bundled memory set and run sample recalls")
    demo.add_argument("--bank", default="demo", help="bank to use (emptied first)")

    retain = commands.add_parser("retain", help="retain memories from a JSON Lines file")
    retain.add_argument("file", type=Path)
    retain.add_argument(
        "--bank", help="target bank; without it each line's own 'bank' field is used"
    )
    retain.add_argument(
        "--documents", type=Path, help="documents JSONL: each memory's document text is its chunk"
    )
    retain.add_argument(
        "--batch-size", type=positive_int, default=256, help="memories per retain call (>= 1)"
    )

    bulk = commands.add_parser(
        "import",
        help="import a large JSON Lines file in batches; run again to resume",
        description="Each line is a memory (the retain file's format; an 'embedding' "
        "field is used as the memory's vector). Each batch is one transaction; memories "
        "whose id the bank already holds are skipped, so an interrupted import resumes.",
    )
    bulk.add_argument("file", type=Path)
    bulk.add_argument("--bank", required=True, help="target bank")
    bulk.add_argument(
        "--batch-size", type=positive_int, default=1000, help="memories per transaction (>= 1)"
    )
    bulk.add_argument(
        "--embedding-model",
        help="the model that made the lines' embeddings; refused unless it is the store's",
    )
    bulk.add_argument(
        "--defer-indexes",
        action="store_true",
        help="drop the store's indexes that only searches and forgetting read (vector, "
        "full-text, incoming links, postings by memory) for the load and build them once "
        "after it (20,000 memories with their vectors: about three times "
        "as fast into an empty store), but every bank's searches go without them meanwhile: "
        "for loading a store nobody searches yet. Kept when the bank is larger than the "
        "import holds in memory.",
    )

    backfill = commands.add_parser(
        "backfill",
        help="store late-interaction vectors for memories that have none",
        description="Memories imported with their own embedding, or retained with late "
        "interaction off, have no late-interaction vectors; recall in a bank where many "
        "lack them goes without late interaction. This encodes them, a batch per "
        "transaction, then restores the readings in context that forgetting or "
        "re-retaining the memory before a memory dropped.",
    )
    backfill.add_argument("--bank", help="only this bank (default: every bank)")
    backfill.add_argument(
        "--batch-size", type=positive_int, default=256, help="memories per transaction (>= 1)"
    )

    evaluate = commands.add_parser(
        "eval", help="turn-level recall@k on a LoCoMo-format directory (memories, queries)"
    )
    evaluate.add_argument("directory", type=Path)
    evaluate.add_argument(
        "--arms",
        nargs="+",
        choices=ARM_ORDER,
        help="arms to run (default: all four)",
    )
    evaluate.add_argument("--keyword", choices=["bm25", "native"], help="keyword arm backend")
    evaluate.add_argument("--budget", choices=BUDGETS, default="mid")
    evaluate.add_argument(
        "--graph-weighting", choices=["count", "idf"], help="graph arm entity weighting"
    )
    evaluate.add_argument(
        "--reranker",
        help="reranker provider or failover list (auto, local, onnx, cohere, tei, passthrough)",
    )
    evaluate.add_argument(
        "--rerank-depth",
        type=non_negative_int,
        help="candidates the cross-encoder scores, for every budget (>= 0)",
    )
    evaluate.add_argument(
        "--late-interaction",
        choices=["on", "off"],
        help="order the fused list by MaxSim before the cross-encoder (default: on)",
    )
    evaluate.add_argument("--banks", nargs="+", help="only these conversations")
    evaluate.add_argument(
        "--limit", type=positive_int, help="at most this many questions per bank (>= 1)"
    )
    evaluate.add_argument(
        "--reuse",
        action="store_true",
        help="keep the banks retained by an earlier run (a bank not there yet is retained)",
    )
    evaluate.add_argument(
        "--retain-batch",
        type=positive_int,
        default=RETAIN_BATCH,
        help=f"memories per retain call (>= 1, default {RETAIN_BATCH}; 1 retains turn by "
        "turn, as an agent does)",
    )
    evaluate.add_argument("--json", type=Path, help="also write the full report here")

    mcp = commands.add_parser(
        "mcp", help="serve the recall and retain tools of one bank over stdio (MCP)"
    )
    mcp.add_argument("--bank", required=True, help="the memory bank the tools work on")
    mcp.add_argument(
        "--metadata-filter",
        type=json_object,
        help="a JSON metadata filter bound to every recall (a scope the model can't widen); "
        "the server then offers recall and retain only",
    )

    recall = commands.add_parser("recall", help="recall memories for a query")
    recall.add_argument("query")
    recall.add_argument("--bank", required=True)
    recall.add_argument("--budget", choices=BUDGETS)
    recall.add_argument("--max-tokens", type=int)
    recall.add_argument("--types", nargs="+", choices=FACT_TYPES)
    recall.add_argument("--tags", nargs="*")
    recall.add_argument("--tags-match", choices=TAGS_MATCHES)
    recall.add_argument("--include-chunks", action="store_true", default=None)
    recall.add_argument("--max-chunk-tokens", type=int)
    recall.add_argument("--query-timestamp", help="ISO-8601 'now' for relative dates")
    recall.add_argument(
        "--metadata-filter", type=json_object, help='JSON, e.g. \'{"team.name": "core"}\''
    )
    recall.add_argument("--after", help="only what happened at or after this ISO-8601 time")
    recall.add_argument("--before", help="only what happened before this ISO-8601 time")
    recall.add_argument("--json", action="store_true", help="print the result as JSON")
    recall.add_argument("--trace", action="store_true", help="include timings per stage")
    recall.add_argument(
        "--explain", action="store_true", help="show each result's rank in every arm"
    )
    add_memories_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _exit_on_sigterm()
    try:
        if args.command == "demo":
            from hindsight_tools.cli.demo import run_demo

            run_demo(args.bank)
        elif args.command == "retain":
            _retain(args)
        elif args.command == "eval":
            _evaluate(args)
        elif args.command == "import":
            _import(args)
        elif args.command == "backfill":
            _backfill(args)
        elif args.command == "mcp":
            try:
                from hindsight_tools.tools.mcp import run
            except ImportError as exc:  # the optional 'mcp' extra; the message says so
                print(f"error: {exc}", file=sys.stderr)
                return 2
            run(args.bank, args.metadata_filter)
        elif args.command == "memories":
            run_memories(args)
        else:
            _recall(args)
    except HindsightError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _exit_on_sigterm() -> None:
    """Unwind on SIGTERM (``kill``, a service manager, an MCP client closing its server).

    Python's default for SIGTERM dies on the spot, so the engine never leaves the embedded
    server and PostgreSQL keeps running until some later process joins and leaves it. As
    ``SystemExit`` the ``with`` blocks close and the last user stops the server. A handler
    someone else installed is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))


def _retain(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from hindsight_tools.engine import MemoryEngine
    from hindsight_tools.errors import FieldProblem, InvalidRequestError
    from hindsight_tools.jsonl import item_from_record, read_documents, read_records

    documents = read_documents(args.documents) if args.documents else {}
    by_bank: dict[str, list[dict[str, Any]]] = {}
    for number, record in read_records(args.file):
        bank = args.bank or record.get("bank")
        if not isinstance(bank, str):
            raise InvalidRequestError(
                [FieldProblem(f"{args.file}:{number}", "no --bank given and no 'bank' field")]
            )
        item = item_from_record(record)
        if item.get("document_id") in documents and "chunk" not in item:
            item["chunk"] = documents[item["document_id"]]
        by_bank.setdefault(bank, []).append(item)
    total = sum(len(items) for items in by_bank.values())
    stored = 0  # what the engine says it stored, not what was read
    with MemoryEngine() as engine, tqdm(total=total, unit="memory", desc="retain") as bar:
        for bank, items in by_bank.items():
            iterator = iter(items)
            while batch := list(islice(iterator, args.batch_size)):
                stored += len(engine.retain(bank, batch).ids)
                bar.update(len(batch))
    print(f"retained {stored} memories into {len(by_bank)} bank(s)")


def _import(args: argparse.Namespace) -> None:
    from array import array

    from tqdm import tqdm

    from hindsight_tools.engine import MemoryEngine
    from hindsight_tools.errors import FieldProblem, InvalidRequestError
    from hindsight_tools.jsonl import item_from_record, read_records

    lines = array("L")  # the file's line of each item, for errors that name items[k]
    with_vectors = 0

    def items() -> Iterator[dict[str, Any]]:
        nonlocal with_vectors
        for number, record in read_records(args.file):
            lines.append(number)
            with_vectors += record.get("embedding") is not None
            yield item_from_record(record)

    def at_line(problem: FieldProblem) -> FieldProblem:
        found = re.match(r"items\[(\d+)\]", problem.location)
        if found is None or int(found.group(1)) >= len(lines):
            return problem
        where = f"{args.file}:{lines[int(found.group(1))]} ({problem.location})"
        return FieldProblem(where, problem.message)

    with MemoryEngine() as engine, tqdm(unit="memory", desc="import") as bar:
        try:
            result = engine.import_memories(
                args.bank,
                items(),
                batch_size=args.batch_size,
                embedding_model=args.embedding_model,
                progress=bar.update,
                defer_indexes=args.defer_indexes,
            )
        except InvalidRequestError as exc:
            raise InvalidRequestError([at_line(p) for p in exc.problems]) from None
        late = engine.late_interaction
    print(
        f"imported {result.imported} memories into {result.bank_id} in {result.batches} "
        f"batch(es); skipped {result.skipped} already stored or repeated"
    )
    if result.analyzed:
        print("the store's statistics were brought up to date for the planner (ANALYZE)")
    if result.indexes_deferred:
        print("the search indexes were set aside for the load and built after it")
    elif args.defer_indexes:
        print(
            "the search indexes were kept: the bank is larger than the import "
            "holds in memory (HINDSIGHT_API_IMPORT_LINK_EXACT_MAX_UNITS)"
        )
    if with_vectors and late:
        print(
            f"{with_vectors} line(s) brought their embedding and have no late-interaction "
            f"vectors yet: run hindsight-tools backfill --bank {result.bank_id}"
        )


def _backfill(args: argparse.Namespace) -> None:
    from hindsight_tools.engine import MemoryEngine

    with MemoryEngine() as engine:
        if not engine.late_interaction:
            print("late interaction is off (HINDSIGHT_API_LATE_INTERACTION): nothing to store")
            return
        filled = engine.backfill_token_vectors(args.bank, batch=args.batch_size)
    where = f"bank {args.bank}" if args.bank else "every bank"
    print(
        f"stored late-interaction vectors or readings in context for {filled} memories in {where}"
    )


def _evaluate(args: argparse.Namespace) -> None:
    from hindsight_tools.engine import MemoryEngine
    from hindsight_tools.evaluation import (
        EVAL_BANK_PREFIX,
        format_report,
        load_dataset,
        run_eval,
    )
    from hindsight_tools.recall.budget import rerank_depth

    settings = eval_settings(args)
    dataset = load_dataset(args.directory)
    with MemoryEngine(settings=settings) as engine:
        if args.reuse:  # banks retained before late interaction, or with it off
            for bank in dataset.banks:
                if args.banks is None or bank.bank in args.banks:
                    engine.backfill_token_vectors(EVAL_BANK_PREFIX + bank.bank)
        report = run_eval(
            engine,
            dataset,
            budget=args.budget,
            banks=args.banks,
            limit=args.limit,
            fresh=not args.reuse,
            retain_batch=args.retain_batch,
        )
    print(
        f"arms: {', '.join(settings.recall_arms)}; keyword backend: "
        f"{settings.text_search_extension}; budget: {args.budget}; reranker: "
        f"{engine.reranker_name} (depth {rerank_depth(args.budget, settings)}, keep "
        f"{settings.reranker_keep}); late "
        f"interaction: {'on' if engine.late_interaction else 'off'}"
    )
    print(format_report(report))
    if args.json:
        args.json.write_text(report.to_json())


def eval_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings with the eval flags over them, validated like the rest."""
    overrides: dict[str, Any] = {}
    if args.arms:
        overrides["recall_arms"] = tuple(args.arms)
    if args.keyword:
        overrides["text_search_extension"] = args.keyword
    if args.graph_weighting:
        overrides["graph_entity_weighting"] = args.graph_weighting
    if args.reranker:
        overrides["reranker_provider"] = args.reranker
    if args.rerank_depth is not None:
        for budget in BUDGETS:
            overrides[f"reranker_depth_{budget}"] = args.rerank_depth
    if args.late_interaction:
        overrides["late_interaction"] = args.late_interaction == "on"
    return Settings().with_overrides(overrides)


def _recall(args: argparse.Namespace) -> None:
    from hindsight_tools.engine import MemoryEngine

    with MemoryEngine() as engine:
        result = engine.recall(
            args.bank,
            args.query,
            budget=args.budget,
            max_tokens=args.max_tokens,
            types=args.types,
            tags=args.tags,
            tags_match=args.tags_match,
            include_chunks=args.include_chunks,
            max_chunk_tokens=args.max_chunk_tokens,
            query_timestamp=args.query_timestamp,
            trace=args.trace or args.explain,
            metadata_filter=args.metadata_filter,
            occurred_after=args.after,
            occurred_before=args.before,
        )
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(format_result(result, explain=args.explain))


if __name__ == "__main__":
    raise SystemExit(main())
