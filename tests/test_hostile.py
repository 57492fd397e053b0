"""Hostile input: every call ends in a result or an InvalidRequestError naming the field,
never in a database error, and a refused call writes nothing.

Property-based (hypothesis): arbitrary Unicode, NUL bytes, unpaired surrogates, megabyte
strings, SQL and tsquery syntax and injection payloads in every field a caller controls.
Example counts come from the hypothesis profile chosen in ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hindsight_tools import (
    InvalidRequestError,
    MemoryEngine,
    RecallResult,
    RecallToolArgs,
    Settings,
)
from hindsight_tools.engine.core import EngineCore
from hindsight_tools.models import FACT_TYPES
from hindsight_tools.validation import parse_items
from tests.hostile import (
    PAYLOADS,
    Conn,
    dates,
    metadata,
    nasty_text,
    result_or_rejection,
    some_text,
    totals,
)

SEEDED = "hostile-seeded"
SEED_ITEMS: list[dict[str, Any]] = [
    {
        "id": "s1",
        "text": "Alice met Bob in Paris on June 5, 2023 to sign the Zanzibar contract",
        "occurred_start": "2023-06-05",
        "tags": ["work", "'; DROP TABLE banks; --"],
        "document_id": "doc-1",
        "chunk": "Alice: shall we sign? Bob: yes, in Paris.",
        "metadata": {"source": "chat", "ünï": ["😀", 1, 2.5, None]},
    },
    {
        "id": "s2",
        "text": "Bob moved to 東京 in 2022 and learned Japanese",
        "occurred_start": "2022-03-01",
        "entities": ["Bob", "東京"],
        "causal_links": [{"target_id": "s1"}],
    },
    {"id": "s3", "text": "Carol's cat Miso hates thunderstorms 🐱", "tags": ["home"]},
    {"id": "s4", "text": "a & b | !c <-> (d:*) is not a query language here", "context": "notes"},
]
SEED_IDS = {item["id"] for item in SEED_ITEMS}
DEEP: list[Any] = []
for _ in range(100):  # deeper than allowed
    DEEP = [DEEP]
_rng = random.Random(7)
# Incompressible, so PostgreSQL can't squeeze them under its index row limit.
LONG_WORD = "".join(_rng.choice(string.ascii_lowercase) for _ in range(2000))
LONG_ID = "".join(chr(_rng.randint(0x1F300, 0x1FAFF)) for _ in range(256))

banks = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.:@-]{0,40}", fullmatch=True).map(lambda s: f"hostile-{s}"),
    nasty_text,
)
items = st.fixed_dictionaries(
    {"text": some_text},
    optional={
        "id": some_text,
        "context": some_text,
        "fact_type": st.sampled_from(FACT_TYPES) | some_text,
        "tags": st.lists(some_text, max_size=4),
        "entities": st.lists(some_text, max_size=4),
        "document_id": some_text,
        "chunk": some_text,
        "metadata": metadata,
        "occurred_start": dates,
        "mentioned_at": dates,
        "proof_count": st.integers(),
    },
)
recall_options = st.fixed_dictionaries(
    {},
    optional={
        "budget": st.sampled_from(("low", "mid", "high")) | some_text,
        "max_tokens": st.integers(),
        "types": st.lists(st.sampled_from(FACT_TYPES) | some_text, max_size=3),
        "tags": st.lists(some_text, max_size=3),
        "tags_match": st.sampled_from(("any", "all", "any_strict", "all_strict", "exact"))
        | some_text,
        "include_chunks": st.booleans(),
        "max_chunk_tokens": st.integers(),
        "query_timestamp": dates,
        "trace": st.booleans(),
    },
)


@pytest.fixture(scope="module")
def seeded(engine: MemoryEngine) -> Iterator[str]:
    engine.retain(SEEDED, SEED_ITEMS)
    yield SEEDED
    engine.delete_bank(SEEDED)


@pytest.fixture(scope="module")
def native(engine: MemoryEngine, settings: Settings) -> Iterator[MemoryEngine]:
    """The same store searched by the ``native`` keyword backend (tsquery built in SQL)."""
    native_settings = settings.model_copy(update={"text_search_extension": "native"})
    with MemoryEngine(engine.database_url, settings=native_settings) as other:
        yield other


def _stored(db: Conn, bank_id: str) -> dict[str, tuple[Any, ...]]:
    rows = db.execute(
        "SELECT id, text, context, tags, metadata FROM memory_units WHERE bank_id = %s",
        (bank_id,),
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


@given(bank_id=banks, batch=st.lists(items, min_size=1, max_size=3))
# A 2,000-byte word next to a 1 KB id: the BM25 postings key would pass btree's row limit.
@example(bank_id="hostile-x", batch=[{"id": LONG_ID, "text": LONG_WORD + " tail"}])
@example(bank_id="hostile-x", batch=[{"text": "t", "occurred_start": "0001-01-01T00:00+05:00"}])
@example(bank_id="hostile-x", batch=[{"text": "t", "metadata": {"k\x00": 1e23, "v": "\ud800"}}])
@example(bank_id="hostile-x", batch=[{"text": "t", "metadata": {"deep": DEEP}}])
@example(bank_id="hostile-x", batch=[{"text": "t", "entities": ["ῷ" * 256] * 2}])
@example(bank_id="hostile-x", batch=[{"text": "t", "context": "ab " * 400_000}])
@example(bank_id="hostile-x", batch=[{"text": "t", "chunk": "字" * 1_000_000}])
@example(bank_id="x'; DROP TABLE banks; --", batch=[{"text": "t"}])
def test_retain_stores_hostile_text_exactly_or_refuses_it_without_writing(
    engine: MemoryEngine, db: Conn, bank_id: str, batch: list[dict[str, Any]]
) -> None:
    before = totals(db)
    outcome = result_or_rejection(lambda: engine.retain(bank_id, batch))
    if isinstance(outcome, InvalidRequestError):
        assert totals(db) == before
        assert all(p.location.startswith(("items", "bank_id")) for p in outcome.problems)
        return
    try:
        stored = _stored(db, bank_id)
        assert sorted(stored) == sorted(outcome.ids)
        for item, memory_id in zip(batch, outcome.ids, strict=True):
            text, context, tags, meta = stored[memory_id]
            assert (text, context) == (item["text"], item.get("context"))
            assert tags == item.get("tags", [])
            given = item.get("metadata", {})
            assert meta == given and list(meta) == list(given)  # key order kept too
    finally:
        engine.delete_bank(bank_id)


@given(
    bank_id=st.none() | banks,
    query=some_text,
    options=recall_options,
    backend=st.sampled_from(("bm25", "native")),
)
@example(bank_id=None, query="'; DROP TABLE memory_units; --", options={}, backend="native")
@example(bank_id=None, query="a" * 3_000_000, options={"include_chunks": True}, backend="bm25")
@example(bank_id=None, query="last year", options={"query_timestamp": "0001-01-01"}, backend="bm25")
@example(bank_id=None, query="next year", options={"query_timestamp": "9999-12-31"}, backend="bm25")
@example(bank_id=None, query="Zanzibar", options={"tags": ["x\x00"]}, backend="bm25")
def test_recall_answers_hostile_requests_or_refuses_them(
    engine: MemoryEngine,
    native: MemoryEngine,
    seeded: str,
    db: Conn,
    bank_id: str | None,
    query: str,
    options: dict[str, Any],
    backend: str,
) -> None:
    before = totals(db)
    recaller = native if backend == "native" else engine
    target = seeded if bank_id is None else bank_id
    outcome = result_or_rejection(lambda: recaller.recall(target, query, **options))
    assert totals(db) == before
    if isinstance(outcome, InvalidRequestError):
        allowed = {"bank_id", "query", *options}
        assert all(p.location.split("[")[0].split(".")[0] in allowed for p in outcome.problems)
        return
    assert isinstance(outcome, RecallResult)
    assert {m.id for m in outcome.memories} <= (SEED_IDS if target == seeded else set())


@given(raw=st.lists(st.dictionaries(some_text, some_text | metadata | st.integers()), max_size=3))
def test_item_validation_only_ever_raises_invalid_request(raw: list[dict[str, Any]]) -> None:
    result_or_rejection(lambda: parse_items(raw, Settings()))


@given(query=some_text | st.integers() | st.none(), options=recall_options)
def test_request_validation_only_ever_raises_invalid_request(
    query: Any, options: dict[str, Any]
) -> None:
    result_or_rejection(lambda: EngineCore.recall_request(query, options))


def test_metadata_deeper_than_json_can_recurse_is_refused(engine: MemoryEngine, bank: str) -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidRequestError, match=r"items\[0\]\.metadata: nests deeper than 32"):
        engine.retain(bank, [{"text": "t", "metadata": {"deep": deep}}])


def test_injection_payloads_are_plain_text(
    engine: MemoryEngine, settings: Settings, bank: str
) -> None:
    """Stored and matched as text: every statement is parameterised, so none of it is SQL."""
    payloads = [p for p in PAYLOADS if p.strip()]
    engine.retain(
        bank,
        [
            {"id": f"p{i}", "text": f"note {p}", "tags": [p], "entities": [p]}
            for i, p in enumerate(payloads)
        ],
    )
    quick = settings.model_copy(update={"reranker_provider": "passthrough"})
    with MemoryEngine(engine.database_url, settings=quick) as plain:
        for i, payload in enumerate(payloads):
            text = f"note {payload}"
            found = plain.recall(bank, text, tags=[payload], tags_match="all_strict")
            assert [(m.id, m.text, m.tags, m.entities) for m in found.memories] == [
                (f"p{i}", text, [payload], [" ".join(payload.split())])
            ]


TOOL_FIELDS = tuple(RecallToolArgs.model_fields)
tool_values = some_text | metadata | st.integers() | st.floats() | st.booleans() | st.none()


@given(
    arguments=st.one_of(
        st.dictionaries(st.sampled_from(TOOL_FIELDS) | some_text, tool_values, max_size=5),
        some_text,  # what a model might send instead of JSON
        st.dictionaries(st.sampled_from(TOOL_FIELDS), tool_values, max_size=4).map(json.dumps),
    )
)
@example(arguments='{"query": "Zanzibar", "budget": "huge"}')
@example(arguments='{"query": "Zanzibar", "max_tokens": -1}')
@example(arguments="{not json")
@example(arguments={"query": "'; DROP TABLE memory_units; --", "tags_match": "exact"})
def test_the_recall_tool_answers_any_arguments_with_text(
    engine: MemoryEngine, seeded: str, db: Conn, arguments: dict[str, Any] | str
) -> None:
    from hindsight_tools import run_recall_tool

    before = totals(db)
    answer = run_recall_tool(engine, seeded, arguments)  # never raises into the agent loop
    assert isinstance(answer, str) and answer
    assert totals(db) == before
