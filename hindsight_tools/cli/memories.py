"""``hindsight-tools memories get|list|tags|delete``: reading back, paging through, forgetting."""

from __future__ import annotations

import argparse
import json
from typing import Any, get_args

from hindsight_tools.models import FACT_TYPES, ListOrder, StoredMemory, TagsMatch


def json_object(text: str) -> dict[str, Any]:
    """An argparse type: a JSON object (argparse prefixes the flag's name)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object, got {type(value).__name__}")
    return value


def _page_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to 1000, got {text!r}")
    return value


def _offset(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def add_memories_parser(commands: Any) -> None:
    memories = commands.add_parser("memories", help="read back, list, count tags or delete")
    actions = memories.add_subparsers(dest="action", required=True)
    get = actions.add_parser("get", help="print memories by id")
    get.add_argument("ids", nargs="+")
    listing = actions.add_parser("list", help="print one page of a bank's memories")
    listing.add_argument("--metadata-filter", type=json_object, help="a JSON metadata filter")
    listing.add_argument("--types", nargs="+", choices=FACT_TYPES)
    listing.add_argument("--tags", nargs="*")
    listing.add_argument("--tags-match", choices=get_args(TagsMatch), default="any")
    listing.add_argument("--after", help="only what happened at or after this ISO-8601 time")
    listing.add_argument("--before", help="only what happened before this ISO-8601 time")
    listing.add_argument(
        "--order",
        choices=get_args(ListOrder),
        default="id",
        help="id (default), or updated_at: the most recently written first",
    )
    listing.add_argument("--limit", type=_page_size, default=100, help="1 to 1000 (default 100)")
    listing.add_argument("--offset", type=_offset, default=0)
    tags = actions.add_parser("tags", help="print a bank's tags with how many memories carry each")
    tags.add_argument("--prefix", help="only the tags starting with this text")
    delete = actions.add_parser("delete", help="forget memories by id, or a whole document")
    target = delete.add_mutually_exclusive_group(required=True)
    target.add_argument("ids", nargs="*", default=[])
    target.add_argument("--document", help="forget this document and every memory from it")
    for action in (get, listing, tags, delete):
        action.add_argument("--bank", required=True)
    for action in (get, listing, tags):
        action.add_argument("--json", action="store_true", help="one JSON object per line")


def run_memories(args: argparse.Namespace) -> None:
    from hindsight_tools.engine import MemoryEngine

    with MemoryEngine() as engine:
        if args.action == "delete":
            if args.document is not None:
                count = engine.delete_document(args.bank, args.document)
                print(f"deleted {count} memories of document {args.document!r}")
            else:
                print(f"deleted {engine.delete_memories(args.bank, args.ids)} memories")
            return
        if args.action == "tags":
            counts = engine.list_tags(args.bank, prefix=args.prefix)
            for tag, n in counts.items():
                print(json.dumps({"tag": tag, "memories": n}) if args.json else f"{n}\t{tag}")
            return
        if args.action == "get":
            found = engine.get_memories(args.bank, args.ids)
        else:
            found = engine.list_memories(
                args.bank,
                metadata_filter=args.metadata_filter,
                types=args.types,
                tags=args.tags,
                tags_match=args.tags_match,
                occurred_after=args.after,
                occurred_before=args.before,
                order=args.order,
                limit=args.limit,
                offset=args.offset,
            )
    for memory in found:
        print(memory.model_dump_json() if args.json else _line(memory))


def _line(memory: StoredMemory) -> str:
    date = memory.occurred_start or memory.mentioned_at
    when = f"{date:%Y-%m-%d}" if date else "undated"
    return f"{memory.id}\t{when}\t{memory.fact_type}\t{memory.text}"
