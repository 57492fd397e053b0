"""A memory is read after the memory before it in its document however the document was
retained: a message at a time, in one call, or imported in batches; on the real model and
PostgreSQL. And what is read after a stored memory is checked again when it is written."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
import pytest
from psycopg import sql

from hindsight_tools import AsyncMemoryEngine, MemoryEngine, MemoryItem, Settings
from hindsight_tools.retain.document_order import (
    drop_stale_readings_plan,
    following_positions,
    stored_before_plan,
)
from hindsight_tools.retain.reading_context import (
    PREVIOUS_MAX_CHARS,
    Before,
    firsts_of_documents,
    last_of_documents,
    memories_before,
)
from hindsight_tools.retain.token_vectors import (
    banks_plan,
    missing_token_vectors_plan,
    store_readings_plan,
    store_token_vectors_plan,
    unread_plan,
)
from hindsight_tools.retain.units import PreparedItem, prepare_items
from hindsight_tools.runtime.plan import run_plan

Conn = psycopg.Connection[tuple[Any, ...]]

# Two conversations interleaved, as an agent talking in two threads would retain them.
TURNS: list[dict[str, Any]] = [
    {"id": "q", "text": "Joanna: How long have you had your turtles?", "document_id": "s1"},
    {"id": "x", "text": "Nate: I won my first gaming tournament.", "document_id": "s2"},
    {"id": "a", "text": "Nate: I've had them for three years now!", "document_id": "s1"},
    {"id": "y", "text": "Joanna: Which game was it?", "document_id": "s2"},
    {"id": "b", "text": "Nate: They love the sunny spot by the window.", "document_id": "s1"},
]
READ_AFTER = {"q": None, "x": None, "a": "q", "y": "x", "b": "a"}


def readings(db: Conn, bank: str) -> dict[str, tuple[str | None, bytes | None]]:
    rows = db.execute(
        "SELECT id, context_of, context_vectors FROM memory_token_vectors WHERE bank_id = %s",
        (bank,),
    ).fetchall()
    return {r[0]: (r[1], None if r[2] is None else bytes(r[2])) for r in rows}


def read_after_whom(db: Conn, bank: str) -> dict[str, str | None]:
    return {memory: of for memory, (of, _) in readings(db, bank).items()}


def same_readings(engine: MemoryEngine, db: Conn, bank: str, other: str) -> None:
    """``bank`` and ``other`` hold the same readings in context: read after the same
    memories, and scoring a question alike (a batch is encoded with padding, so its int8
    vectors differ from a lone text's in the last bit)."""
    late = engine._core.late_interaction
    assert late is not None
    query = late.encode_query("How long has Nate had his turtles, and where do they sit?")
    mine, theirs = readings(db, bank), readings(db, other)
    assert read_after_whom(db, bank) == read_after_whom(db, other)
    for memory, (of, vectors) in mine.items():
        if of is None:
            continue
        other_vectors = theirs[memory][1]
        assert vectors is not None and other_vectors is not None
        score, other_score = late.score(query, [vectors, other_vectors])
        assert score == pytest.approx(other_score, abs=0.01), memory


def reads_as_one_call(
    engine: MemoryEngine, db: Conn, bank: str, turns: Sequence[dict[str, Any]] = TURNS
) -> None:
    """``bank`` holds the readings in context of ``turns`` retained in one call."""
    one_call = f"{bank}-whole"
    try:
        engine.retain(one_call, turns)
        same_readings(engine, db, bank, one_call)
    finally:
        engine.delete_bank(one_call)


def with_vectors(engine: MemoryEngine, turns: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``turns`` bringing their embeddings, as a migration from another store brings them."""
    vectors = engine._core.embedder.embed([turn["text"] for turn in turns])
    return [
        {**turn, "embedding": [float(x) for x in v]} for turn, v in zip(turns, vectors, strict=True)
    ]


def positions(db: Conn, bank: str) -> dict[str, int | None]:
    rows = db.execute(
        "SELECT id, document_position FROM memory_units WHERE bank_id = %s", (bank,)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def prepared(documents: Sequence[str | None]) -> list[PreparedItem]:
    items = [
        MemoryItem(id=f"m{i}", text=f"text {i}", document_id=document)
        for i, document in enumerate(documents)
    ]
    return prepare_items(items, lambda _: [])


def test_positions_follow_each_document_end_in_the_call_order() -> None:
    batch = prepared(["a", None, "b", "a", "a"])
    assert following_positions(batch, {"a": 7}) == {0: 8, 2: 1, 3: 9, 4: 10}


def test_a_call_first_item_of_a_document_is_read_after_the_memory_found_before_it() -> None:
    batch = prepared(["a", "b", "a", None])
    stored = Before.of("old", "o" * 1_000, stored=True)
    assert firsts_of_documents((p.id, p.document_id) for p in batch) == {"a": "m0", "b": "m1"}
    before = memories_before(batch, {"a": stored})
    assert before == {0: stored, 2: Before("m0", "text 0")}
    assert len(stored.text) == PREVIOUS_MAX_CHARS  # only the words the reading holds

    # an import's next batch follows this one's last memory of each document
    assert last_of_documents(batch) == {
        "a": Before("m2", "text 2", stored=True),
        "b": Before("m1", "text 1", stored=True),
    }


def test_a_message_at_a_time_is_read_as_one_call_reads_it(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    for turn in TURNS:
        engine.retain(bank, [turn])
    assert read_after_whom(db, bank) == READ_AFTER
    reads_as_one_call(engine, db, bank)
    assert positions(db, bank) == {"q": 1, "x": 1, "a": 2, "y": 2, "b": 3}


def test_a_memory_retained_again_keeps_its_place_and_is_read_after_the_one_before_it(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, TURNS[:3])
    engine.retain(bank, TURNS[3:])
    engine.retain(bank, [{**TURNS[2], "text": "Nate: I've had them for four years now!"}])
    assert positions(db, bank) == {"q": 1, "x": 1, "a": 2, "y": 2, "b": 3}
    # not after b, the last of its document, but after q, before its place; and b, read
    # after a's old words, has lost its reading
    assert read_after_whom(db, bank) == {**READ_AFTER, "b": None}

    # moved to another document, it goes to that document's end
    engine.retain(bank, [{**TURNS[2], "document_id": "s2"}])
    assert positions(db, bank)["a"] == 3
    assert read_after_whom(db, bank)["a"] == "y"


def test_memories_stored_without_a_position_are_never_read_after(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, TURNS[:1])
    # as a memory stored before the store kept positions
    db.execute("UPDATE memory_units SET document_position = NULL WHERE bank_id = %s", (bank,))
    engine.retain(bank, [TURNS[2]])
    assert read_after_whom(db, bank) == {"q": None, "a": None}
    assert positions(db, bank) == {"q": None, "a": 1}


@pytest.mark.parametrize("change", ["forgotten", "rewritten"])
def test_a_memory_changed_between_reading_and_writing_leaves_no_reading(
    engine: MemoryEngine, bank: str, db: Conn, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    engine.retain(bank, TURNS[:1])
    core = engine._core
    encode = core.encode

    def meanwhile(items: Sequence[MemoryItem], before: Mapping[int, Before]) -> Any:
        # another writer, after the memory before was read and before the write
        monkeypatch.setattr(core, "encode", encode)
        if change == "forgotten":
            engine.delete_memories(bank, ["q"])
        else:
            engine.retain(bank, [{**TURNS[0], "text": "Joanna: Do you still paint?"}])
        return encode(items, before)

    monkeypatch.setattr(core, "encode", meanwhile)
    engine.retain(bank, [TURNS[2]])
    assert read_after_whom(db, bank)["a"] is None
    assert readings(db, bank)["a"][1] is None

    # with nothing changed meanwhile, the reading after a stored memory is kept
    engine.retain(bank, [TURNS[4]])
    assert read_after_whom(db, bank)["b"] == "a"
    assert readings(db, bank)["b"][1] is not None


def test_an_import_reads_across_its_batches_and_after_what_the_bank_held(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, TURNS[:1])
    engine.import_memories(bank, TURNS[1:], batch_size=1)
    assert read_after_whom(db, bank) == READ_AFTER
    assert positions(db, bank) == {"q": 1, "x": 1, "a": 2, "y": 2, "b": 3}
    reads_as_one_call(engine, db, bank)


def test_an_import_reads_after_the_batch_still_being_written(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    # one conversation in batches of one: each batch is encoded while the one before it,
    # which holds the memory it is read after, is being written
    conversation = [turn for turn in TURNS if turn["document_id"] == "s1"]
    result = engine.import_memories(bank, conversation, batch_size=1)
    assert result.batches == 3
    assert read_after_whom(db, bank) == {"q": None, "a": "q", "b": "a"}
    assert positions(db, bank) == {"q": 1, "a": 2, "b": 3}


def test_with_readings_in_context_off_an_import_still_keeps_positions(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    off = settings.model_copy(update={"late_interaction_context": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.import_memories(bank, TURNS, batch_size=2)
    assert read_after_whom(db, bank) == dict.fromkeys(READ_AFTER)
    # turned on later, a retain follows the positions the import kept
    engine.retain(bank, [{"id": "c", "text": "Nate: Tortoises next?", "document_id": "s1"}])
    assert read_after_whom(db, bank)["c"] == "b"


def test_a_memory_without_a_position_retained_again_takes_the_document_end(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, TURNS[:3])
    db.execute(
        "UPDATE memory_units SET document_position = NULL WHERE bank_id = %s AND id = 'q'",
        (bank,),
    )
    engine.retain(bank, [TURNS[0]])
    assert positions(db, bank)["q"] == 3
    assert read_after_whom(db, bank)["q"] == "a"


def test_items_bringing_only_a_chunk_follow_each_other_across_calls(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    chunk = "Joanna: How long have you had your turtles? Nate: Three years now!"
    engine.retain(bank, [{"id": "q", "text": TURNS[0]["text"], "chunk": chunk}])
    engine.retain(bank, [{"id": "a", "text": TURNS[2]["text"], "chunk": chunk}])
    assert read_after_whom(db, bank) == {"q": None, "a": "q"}


def test_a_reading_after_a_memory_the_call_did_not_write_is_checked(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    engine.retain(bank, TURNS[:3])
    (answer,) = prepare_items([MemoryItem(**TURNS[2])], lambda _: [])
    with psycopg.connect(engine.database_url) as conn:
        # read after q's words: q is stored with them, so the reading stays
        run_plan(
            conn,
            drop_stale_readings_plan(
                bank, [answer], {0: Before.of("q", TURNS[0]["text"])}, written={"a"}
            ),
        )
        conn.commit()
        assert read_after_whom(db, bank)["a"] == "q"
        # read after words q doesn't have (another writer's q was stored instead)
        run_plan(
            conn,
            drop_stale_readings_plan(
                bank, [answer], {0: Before.of("q", "other words")}, written={"a"}
            ),
        )
        conn.commit()
    assert read_after_whom(db, bank)["a"] is None


def test_the_memory_before_is_read_backwards_on_the_document_index(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(bank, TURNS)
    plan = stored_before_plan(bank, [("c", "s1")])
    stmt = next(plan)
    plan.close()
    assert isinstance(stmt.query, str)
    with psycopg.connect(engine.database_url) as conn:
        # a five-row bank is cheapest read whole: forbid that, so the plan shows whether
        # the statement can walk the document's index from its end
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_bitmapscan = off")
        lines = conn.execute(sql.SQL("EXPLAIN ") + sql.SQL(stmt.query), stmt.params).fetchall()
        conn.rollback()
    plan_text = "\n".join(str(line[0]) for line in lines)
    assert "Index Scan Backward using memory_units_document" in plan_text, plan_text


def test_the_backfill_reads_a_memory_after_the_one_before_it_in_its_document(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    given = with_vectors(engine, TURNS)
    engine.import_memories(bank, given, batch_size=2)
    assert readings(db, bank) == {}  # memories bringing vectors aren't encoded at import
    assert engine.backfill_token_vectors(bank, batch=2) == len(TURNS)
    assert read_after_whom(db, bank) == READ_AFTER
    reads_as_one_call(engine, db, bank)


def test_the_backfill_keeps_no_reading_after_a_memory_forgotten_meanwhile(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    given = with_vectors(engine, TURNS[:3])
    engine.import_memories(bank, given)
    with psycopg.connect(engine.database_url) as conn:
        todo = run_plan(conn, missing_token_vectors_plan(bank, 10))
        conn.commit()
        assert {m.id: m.before and m.before.id for m in todo} == {"q": None, "x": None, "a": "q"}
        own, in_context = engine._core._encode_missing(todo)
        engine.delete_memories(bank, ["q"])  # between the reading and the write
        run_plan(conn, store_token_vectors_plan(todo, own, in_context))
        conn.commit()
    assert read_after_whom(db, bank) == {"x": None, "a": None}
    assert readings(db, bank)["a"][1] is None


@pytest.mark.parametrize("change", ["forgotten", "rewritten"])
def test_the_backfill_restores_the_reading_dropped_with_the_memory_before(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn, change: str
) -> None:
    for turn in TURNS:
        engine.retain(bank, [turn])
    # memories without a document are never read after anything, nor each other
    alone = [{"id": "n1", "text": "Nate likes turtles."}, {"id": "n2", "text": "Joanna paints."}]
    engine.retain(bank, alone[:1])
    engine.retain(bank, alone[1:])
    if change == "forgotten":
        engine.delete_memories(bank, ["a"])
        expected = {**READ_AFTER, "b": "q", "n1": None, "n2": None}
        del expected["a"]
        whole = [TURNS[0], TURNS[1], TURNS[3], TURNS[4], *alone]
    else:
        rewritten = {**TURNS[2], "text": "Nate: I've had them for four years now!"}
        engine.retain(bank, [rewritten])
        expected = {**READ_AFTER, "n1": None, "n2": None}
        whole = [TURNS[0], TURNS[1], rewritten, TURNS[3], TURNS[4], *alone]
    assert read_after_whom(db, bank)["b"] is None

    async def backfill() -> int:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            return await aengine.backfill_token_vectors(bank)

    assert asyncio.run(backfill()) == 1
    assert read_after_whom(db, bank) == expected
    reads_as_one_call(engine, db, bank, whole)
    # nothing is left to restore, and memories first of their document are not counted
    assert engine.backfill_token_vectors(bank) == 0


def test_the_backfill_reads_in_context_memories_retained_with_readings_off(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    off = settings.model_copy(update={"late_interaction_context": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, TURNS)
        assert plain.backfill_token_vectors(bank) == 0  # off, nothing is read in context
    assert read_after_whom(db, bank) == dict.fromkeys(READ_AFTER)
    # a batch of one: the pass goes on by id after each batch
    assert engine.backfill_token_vectors(bank, batch=1) == 3
    assert read_after_whom(db, bank) == READ_AFTER
    reads_as_one_call(engine, db, bank)


@pytest.mark.parametrize("change", ["forgotten", "moved", "rewritten", "read"])
def test_a_restored_reading_is_checked_when_it_is_written(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn, change: str
) -> None:
    engine.retain(bank, TURNS)
    engine.delete_memories(bank, ["a"])
    with psycopg.connect(engine.database_url) as conn:
        todo = run_plan(conn, unread_plan(bank, "", 10))
        conn.commit()
        assert [(m.id, m.before and m.before.id) for m in todo] == [("b", "q")]
        # the pass goes on by id: what a batch ended on is not asked for again
        assert run_plan(conn, unread_plan(bank, "b", 10)) == []
        texts = {0: todo[0].text}
        assert todo[0].before is not None
        read = engine._core._read_in_context(1, texts, {0: todo[0].before})
        assert bank in run_plan(conn, banks_plan(None))
        # between the reading and the write: q is forgotten, or goes to another document
        # with the same words; b gets other words (stored without a reading), or another
        # writer gives b a reading
        off = settings.model_copy(update={"late_interaction_context": False})
        if change == "forgotten":
            engine.delete_memories(bank, ["q"])
        elif change == "moved":
            engine.retain(bank, [{**TURNS[0], "document_id": "s2"}])
        elif change == "rewritten":
            with MemoryEngine(engine.database_url, settings=off) as plain:
                plain.retain(bank, [{**TURNS[4], "text": "Nate: They sleep a lot."}])
        else:
            db.execute(
                "UPDATE memory_token_vectors SET context_vectors = '\\x01', context_of = 'q'"
                " WHERE bank_id = %s AND id = 'b'",
                (bank,),
            )
        assert run_plan(conn, store_readings_plan(bank, todo, read)) == 0
        conn.commit()
    assert readings(db, bank)["b"] == (("q", b"\x01") if change == "read" else (None, None))


def test_the_async_engine_reads_a_message_after_the_one_stored_before(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    async def scenario() -> None:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aengine:
            for turn in TURNS:
                await aengine.retain(bank, [turn])

    asyncio.run(scenario())
    assert read_after_whom(db, bank) == READ_AFTER
