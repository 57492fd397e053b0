"""Reading back, listing and forgetting memories; recall filters by metadata and date."""

from __future__ import annotations

import asyncio
import random
import threading
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from hindsight_tools import AsyncMemoryEngine, InvalidRequestError, MemoryEngine, Settings
from tests.conftest import count

DERIVED = ("unit_entities", "memory_links", "memory_terms", "memory_token_vectors")


def _diary() -> list[dict[str, Any]]:
    return [
        {
            "id": "hike",
            "text": "Alice hiked the Dolomites with Bob",
            "occurred_start": "2023-07-08",
            "metadata": {"team": {"name": "core"}, "priority": 2, "labels": ["trip", "summer"]},
            "tags": ["alice"],
            "document_id": "diary",
            "chunk": "July: the Dolomites with Bob.",
        },
        {
            "id": "race",
            "text": "Alice ran a half marathon in Berlin",
            "occurred_start": "2023-06-24",
            "metadata": {"team": {"name": "edge"}, "priority": 5},
            "document_id": "diary",
            "chunk": "June: the half marathon.",
        },
        {
            "id": "rust",
            "text": "Alice started learning Rust",
            "mentioned_at": "2023-08-12",
            "metadata": {"priority": 1, "labels": ["code"]},
            "causal_links": [{"target_id": "race", "link_type": "caused_by"}],
        },
        {"id": "undated", "text": "Alice likes tea with Bob", "metadata": {"nested": {"a": None}}},
    ]


def test_get_memories_returns_what_was_retained(engine: MemoryEngine, bank: str) -> None:
    engine.retain(bank, _diary())
    got = engine.get_memories(bank, ["rust", "nope", "hike"])
    assert [m.id for m in got] == ["rust", "hike"]  # the order asked; unknown ids left out
    hike = got[1]
    assert hike.metadata == {"team": {"name": "core"}, "priority": 2, "labels": ["trip", "summer"]}
    assert hike.occurred_start == datetime(2023, 7, 8, tzinfo=UTC)
    assert hike.tags == ["alice"] and hike.document_id == "diary" and hike.chunk_id
    assert {"Alice", "Bob"} <= set(hike.entities)
    assert hike.created_at <= hike.updated_at
    assert engine.get_memories(bank, []) == []


def test_list_memories_pages_through_a_bank_exactly_once(engine: MemoryEngine, bank: str) -> None:
    ids = [f"m{i:03d}" for i in range(57)]
    random.Random(3).shuffle(ids)
    engine.retain(
        bank, [{"id": i, "text": f"note {i}", "metadata": {"n": int(i[1:])}} for i in ids]
    )
    pages = [engine.list_memories(bank, limit=10, offset=o) for o in range(0, 60, 10)]
    seen = [m.id for page in pages for m in page]
    assert seen == sorted(ids)
    odd = engine.list_memories(bank, metadata_filter={"n": {"$in": [1, 3, 5]}})
    assert [m.id for m in odd] == ["m001", "m003", "m005"]


def test_list_memories_newest_first_pages_by_write_time(engine: MemoryEngine, bank: str) -> None:
    # three writes, the first re-written last: it becomes the newest
    engine.retain(bank, [{"id": i, "text": f"note {i}"} for i in ("b", "c")])
    engine.retain(bank, [{"id": "a", "text": "note a"}])
    engine.retain(bank, [{"id": "b", "text": "note b, rewritten"}])
    newest = [m.id for m in engine.list_memories(bank, order="updated_at")]
    assert newest == ["b", "a", "c"]
    pages = [engine.list_memories(bank, order="updated_at", limit=1, offset=o) for o in range(3)]
    paged = [m.id for page in pages for m in page]
    assert paged == newest
    with pytest.raises(InvalidRequestError, match="order.*'id'.*'updated_at'"):
        engine.list_memories(bank, order="newest")  # type: ignore[arg-type]


def test_list_tags_counts_each_tag_of_the_bank(engine: MemoryEngine, bank: str) -> None:
    engine.retain(
        bank,
        [
            {"text": "one", "tags": ["ns:a", "ns:a.b", "x_y"]},
            {"text": "two", "tags": ["ns:a", "xzy"]},
            {"text": "three"},
        ],
    )
    assert engine.list_tags(bank) == {"ns:a": 2, "ns:a.b": 1, "x_y": 1, "xzy": 1}
    assert engine.list_tags(bank, prefix="ns:a.") == {"ns:a.b": 1}
    # a prefix is literal text: LIKE's metacharacters match only themselves
    assert engine.list_tags(bank, prefix="x_") == {"x_y": 1}
    assert engine.list_tags(bank, prefix="%") == {}
    assert engine.list_tags(f"{bank}-empty") == {}
    with pytest.raises(InvalidRequestError, match="prefix"):
        engine.list_tags(bank, prefix="a\x00")


def test_list_memories_filters_like_recall(engine: MemoryEngine, bank: str) -> None:
    engine.retain(bank, _diary())

    def ids(**kw: Any) -> list[str]:
        return [m.id for m in engine.list_memories(bank, **kw)]

    assert ids(metadata_filter={"team.name": "core"}) == ["hike"]
    assert ids(metadata_filter={"priority": {"$gte": 2}}) == ["hike", "race"]
    assert ids(metadata_filter={"labels": {"$contains": "code"}}) == ["rust"]
    assert ids(metadata_filter={"team": {"$exists": False}}) == ["rust", "undated"]
    assert ids(occurred_after="2023-07-01", occurred_before="2023-09-01") == ["hike", "rust"]
    assert ids(occurred_before="2023-07-08") == ["race"]  # before is exclusive
    assert ids(occurred_after="2023-07-08") == ["hike", "rust"]  # after is inclusive
    assert ids(tags=["alice"], tags_match="any_strict") == ["hike"]
    assert ids(metadata_filter={"priority": {"$lt": 5}}, occurred_after="2023-01-01") == [
        "hike",
        "rust",
    ]


def test_filtered_recall_keeps_only_matching_memories_and_fills_its_budget(
    engine: MemoryEngine, bank: str
) -> None:
    items = [
        {
            "id": f"n{i}",
            "text": f"Note {i} about the garden and its tomatoes",
            "metadata": {"user": "u1" if i % 10 == 0 else "u2"},
            "occurred_start": f"2024-{1 + i % 12:02d}-10",
        }
        for i in range(200)
    ]
    engine.retain(bank, items)
    result = engine.recall(bank, "garden tomatoes", metadata_filter={"user": "u1"}, budget="high")
    returned = [m.id for m in result.memories]
    assert set(returned) == {f"n{i}" for i in range(0, 200, 10)}  # all 20 of them, nothing else
    dated = engine.recall(
        bank,
        "garden tomatoes",
        occurred_after=datetime(2024, 3, 1, tzinfo=UTC),
        occurred_before="2024-04-01",
    )
    assert dated.memories and all(
        m.occurred_start is not None and m.occurred_start.month == 3 for m in dated.memories
    )
    assert len(dated.memories) == len([i for i in range(200) if 1 + i % 12 == 3])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"metadata_filter": {"a": {"$regex": "x"}}}, "metadata_filter.a.$regex"),
        ({"occurred_after": "2024-02-01", "occurred_before": "2024-01-01"}, "occurred_after"),
        ({"occurred_after": "not a date"}, "occurred_after"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(
    engine: MemoryEngine, bank: str, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRequestError, match=field.replace("$", r"\$")):
        engine.recall(bank, "anything", **kwargs)
    with pytest.raises(InvalidRequestError, match=field.replace("$", r"\$")):
        engine.list_memories(bank, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"offset": -1}, "offset")],
)
def test_a_bad_page_is_refused(
    engine: MemoryEngine, bank: str, kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        engine.list_memories(bank, **kwargs)


def _leftovers(
    db: psycopg.Connection[tuple[Any, ...]], bank: str, ids: list[str]
) -> dict[str, int]:
    found = {}
    for table, column in [
        ("unit_entities", "unit_id"),
        ("memory_terms", "unit_id"),
        ("memory_token_vectors", "id"),
    ]:
        row = db.execute(
            psycopg.sql.SQL("SELECT count(*) FROM {} WHERE bank_id = %s AND {} = ANY(%s)").format(
                psycopg.sql.Identifier(table), psycopg.sql.Identifier(column)
            ),
            (bank, ids),
        ).fetchone()
        found[table] = row[0] if row else 0
    row = db.execute(
        "SELECT count(*) FROM memory_links WHERE bank_id = %s"
        " AND (from_unit_id = ANY(%s) OR to_unit_id = ANY(%s))",
        (bank, ids, ids),
    ).fetchone()
    found["memory_links"] = row[0] if row else 0
    return found


def test_delete_memories_leaves_nothing_derived_behind(
    engine: MemoryEngine, bank: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    engine.retain(bank, _diary())
    before = _leftovers(db, bank, ["race"])
    assert before["memory_links"] > 0 and before["memory_terms"] > 0
    assert engine.delete_memories(bank, ["race", "nope"]) == 1
    assert _leftovers(db, bank, ["race"]) == dict.fromkeys(DERIVED, 0)
    assert engine.get_memories(bank, ["race"]) == []
    assert "race" not in [m.id for m in engine.recall(bank, "half marathon Berlin").memories]
    # the keyword statistics are those of a bank that never had it
    (marathon,) = db.execute(
        "SELECT count(*) FROM bank_terms WHERE bank_id = %s AND term = 'marathon'", (bank,)
    ).fetchone() or (None,)
    assert marathon == 0
    (docs, total) = db.execute(
        "SELECT doc_count, total_length FROM banks WHERE bank_id = %s", (bank,)
    ).fetchone() or (None, None)
    assert docs == 3
    stored = db.execute(
        "SELECT sum(search_length) FROM memory_units WHERE bank_id = %s", (bank,)
    ).fetchone()
    assert stored is not None and total == stored[0]
    # an entity no memory mentions any more goes; one still mentioned stays
    names = {
        r[0] for r in db.execute("SELECT canonical_name FROM entities WHERE bank_id = %s", (bank,))
    }
    assert "Berlin" not in names and "Bob" in names
    # the chunk only the deleted memory used goes; the document still has a memory
    assert count(db, "chunks", bank) == 1 and count(db, "documents", bank) == 1
    assert engine.delete_memories(bank, ["race"]) == 0


def test_delete_document_takes_its_memories_and_chunks(
    engine: MemoryEngine, bank: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    engine.retain(bank, _diary())
    assert engine.delete_document(bank, "diary") == 2
    assert [m.id for m in engine.list_memories(bank)] == ["rust", "undated"]
    assert count(db, "chunks", bank) == 0 and count(db, "documents", bank) == 0
    assert _leftovers(db, bank, ["hike", "race"]) == dict.fromkeys(DERIVED, 0)
    assert engine.delete_document(bank, "diary") == 0


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda e, b: e.get_memories(b, "hike"), "ids"),
        (lambda e, b: e.delete_memories(b, [1]), r"ids\[0\]"),
        (lambda e, b: e.delete_memories(b, ["a\x00"]), r"ids\[0\]"),
        (lambda e, b: e.delete_document(b, ""), "document_id"),
        (lambda e, b: e.delete_memories("no spaces", ["a"]), "bank_id"),
    ],
)
def test_bad_ids_are_refused(engine: MemoryEngine, bank: str, call: Any, field: str) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        call(engine, bank)


def test_memory_management_stays_in_its_bank(engine: MemoryEngine, bank: str) -> None:
    other = f"{bank}-other"
    try:
        engine.retain(bank, [{"id": "same", "text": "Mine"}])
        engine.retain(other, [{"id": "same", "text": "Theirs"}])
        assert engine.delete_memories(other, ["same"]) == 1
        assert [m.text for m in engine.get_memories(bank, ["same"])] == ["Mine"]
        assert engine.list_memories(other) == []
    finally:
        engine.delete_bank(other)


def test_the_async_engine_manages_memories_too(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    engine.retain(bank, _diary())

    async def scenario() -> tuple[list[str], list[str], int, list[str]]:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            got = [m.id for m in await aengine.get_memories(bank, ["hike"])]
            listed = [
                m.id for m in await aengine.list_memories(bank, metadata_filter={"priority": 1})
            ]
            deleted = await aengine.delete_memories(bank, ["hike"])
            recalled = await aengine.recall(bank, "Alice", metadata_filter={"priority": 5})
            return got, listed, deleted, [m.id for m in recalled.memories]

    assert asyncio.run(scenario()) == (["hike"], ["rust"], 1, ["race"])


def test_a_bank_deleted_while_a_write_into_it_is_open_leaves_no_link_behind(
    engine: MemoryEngine, bank: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    # Links carry no foreign keys, so delete_bank deletes them itself. A write into the bank
    # that is still open when the delete starts (here a link added by hand under the bank's
    # lock, as retain adds them) must be waited for, or its links outlive the bank.
    engine.retain(bank, _diary())
    writer = psycopg.connect(engine.database_url)
    try:
        writer.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (bank,))
        writer.execute(
            "INSERT INTO memory_links (bank_id, from_unit_id, to_unit_id, link_type, weight)"
            " VALUES (%s, 'hike', 'rust', 'causes', 1.0) ON CONFLICT DO NOTHING",
            (bank,),
        )
        writer.execute("UPDATE banks SET doc_count = doc_count WHERE bank_id = %s", (bank,))
        deleted: list[bool] = []
        deleting = threading.Thread(target=lambda: deleted.append(engine.delete_bank(bank)))
        deleting.start()
        deleting.join(timeout=1.0)
        assert deleting.is_alive(), "the delete must wait for the write in flight"
        writer.commit()
        deleting.join(timeout=30)
    finally:
        writer.close()
    assert deleted == [True]
    assert count(db, "memory_units", bank) == 0
    assert count(db, "memory_links", bank) == 0
