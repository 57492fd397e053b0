"""Bad input is refused before anything is written, with the item, field and what is allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.models import MAX_ID_CHARS, MAX_METADATA_BYTES, MAX_METADATA_DEPTH
from hindsight_tools.validation import (
    MAX_CHUNK_CHARS,
    MAX_ENTITIES_PER_ITEM,
    parse_items,
    validate_bank_id,
)
from tests.conftest import BANK_TABLES, count

GOOD = {"text": "A fine memory"}


@pytest.mark.parametrize(
    ("bad", "location", "hint"),
    [
        ({"text": ""}, "items[1].text", "non-empty"),
        ({"text": "   \n"}, "items[1].text", "non-empty"),
        ({}, "items[1].text", "required"),
        ({"text": 42}, "items[1].text", "valid string"),
        (
            {"text": "x", "fact_type": "opinion"},
            "items[1].fact_type",
            "'world', 'experience' or 'observation'",
        ),
        (
            {"text": "x", "occurred_start": "next-ish Tuesday"},
            "items[1].occurred_start",
            "datetime",
        ),
        (
            {"text": "x", "occurred_start": "2024-05-02", "occurred_end": "2024-05-01"},
            "items[1]",
            "before occurred_start",
        ),
        ({"text": "x", "tags": ["ok", 7]}, "items[1].tags[1]", "valid string"),
        ({"text": "x", "tags": "work"}, "items[1].tags", "valid list"),
        ({"text": "x", "colour": "red"}, "items[1].colour", "allowed fields are"),
        ({"text": "nul\x00byte"}, "items[1].text", "NUL"),
        ({"text": "x", "proof_count": 0}, "items[1].proof_count", "greater than or equal to 1"),
        ({"text": "x", "metadata": {"when": object()}}, "items[1].metadata", "JSON-serialisable"),
        ({"text": "x", "metadata": {"v": float("nan")}}, "items[1].metadata", "NaN"),
        (
            {"text": "x", "causal_links": [{"target_id": "y", "link_type": "inspires"}]},
            "items[1].causal_links[0].link_type",
            "'causes', 'caused_by', 'enables' or 'prevents'",
        ),
        ({"text": "x" * 20_001}, "items[1].text", "at most 20000"),
        ({"text": "x", "context": "c" * 20_001}, "items[1].context", "at most 20000"),
        ({"text": "x", "chunk": "c" * 100_001}, "items[1].chunk", "at most 100000"),
        (
            {"text": "x", "entities": [f"E{i}" for i in range(257)]},
            "items[1].entities",
            "has 257 names; at most 256",
        ),
        ({"text": "x", "tags": ["t"] * 65}, "items[1].tags", "has 65 tags; at most 64"),
        ({"text": "x", "tags": ["t" * 257]}, "items[1].tags[0]", "at most 256 characters"),
        ({"text": "x", "id": "i" * 257}, "items[1].id", "at most 256 characters"),
        ({"text": "x", "metadata": {"m": "v" * 70_000}}, "items[1].metadata", "at most 65536"),
        (
            {"text": "x", "metadata": {"m": json.loads("[" * 40 + "]" * 40)}},
            "items[1].metadata",
            "nests deeper than 32 levels",
        ),
        ({"text": "bad \ud800 surrogate"}, "items[1].text", "unpaired surrogate"),
        ({"text": "x", "entities": ["ok", "\udfff"]}, "items[1].entities[1]", "valid string"),
        (
            {"text": "x", "occurred_start": "0001-01-01T00:00:00+05:00"},
            "items[1].occurred_start",
            "between 0001-01-01 and 9999-12-31",
        ),
        (
            {"text": "x", "mentioned_at": "9999-12-31T23:00:00-05:00"},
            "items[1].mentioned_at",
            "between 0001-01-01 and 9999-12-31",
        ),
    ],
)
def test_bad_item_is_rejected_naming_index_field_and_rule(
    engine: MemoryEngine,
    bank: str,
    db: psycopg.Connection[tuple[Any, ...]],
    bad: dict[str, Any],
    location: str,
    hint: str,
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        engine.retain(bank, [GOOD, bad, GOOD])
    message = str(caught.value)
    assert location in message, message
    assert hint in message, message
    assert all(count(db, table, bank) == 0 for table in BANK_TABLES)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_items([{"text": ""}, GOOD, {"text": "x", "fact_type": "nope"}], Settings())
    assert [p.location for p in caught.value.problems] == ["items[0].text", "items[2].fact_type"]


def test_duplicate_ids_in_one_call_are_rejected() -> None:
    with pytest.raises(InvalidRequestError, match=r"items\[2\]\.id: 'a' repeats items\[0\]\.id"):
        parse_items(
            [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}],
            Settings(),
        )


def test_limits_come_from_settings() -> None:
    tight = Settings(retain_max_text_chars=5, retain_max_tags=1, retain_max_items=2)
    with pytest.raises(InvalidRequestError) as caught:
        parse_items([{"text": "123456", "tags": ["a", "b"]}], tight)
    assert "at most 5" in str(caught.value) and "at most 1" in str(caught.value)
    with pytest.raises(InvalidRequestError, match="at most 2 items"):
        parse_items([GOOD, GOOD, GOOD], tight)


def test_items_must_be_a_list_and_not_empty() -> None:
    with pytest.raises(InvalidRequestError, match="not a single item"):
        parse_items(GOOD, Settings())  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="at least one item"):
        parse_items([], Settings())


def test_causal_link_to_itself_is_rejected(engine: MemoryEngine, bank: str) -> None:
    with pytest.raises(InvalidRequestError, match=r"items\[0\]\.causal_links\[0\]\.target_id"):
        engine.retain(bank, [{"id": "me", "text": "x", "causal_links": [{"target_id": "me"}]}])


@pytest.mark.parametrize(
    "bank_id", ["", "-leading", "has space", "x" * 129, "semi;colon", "ünï", 7, None]
)
def test_bad_bank_ids_are_rejected(bank_id: Any) -> None:
    with pytest.raises(InvalidRequestError, match="bank_id: .* letters, digits and _ . : @ -"):
        validate_bank_id(bank_id)


@pytest.mark.parametrize(
    "bank_id", ["a", "conv-26", "user@example.com", "team:alpha_1.2", "x" * 128]
)
def test_good_bank_ids_pass(bank_id: str) -> None:
    assert validate_bank_id(bank_id) == bank_id


def test_engine_methods_check_the_bank_id(engine: MemoryEngine) -> None:
    for call in (
        lambda: engine.retain("bad bank", [GOOD]),
        lambda: engine.recall("bad bank", "query"),
        lambda: engine.delete_bank("bad bank"),
    ):
        with pytest.raises(InvalidRequestError, match="bank_id"):
            call()


def test_the_documented_limits_are_the_enforced_ones() -> None:
    guarantees = (Path(__file__).resolve().parents[1] / "docs" / "guarantees.md").read_text()
    defaults = Settings()
    rows = {
        "| memory text |": f"{defaults.retain_max_text_chars:,} characters",
        "| context |": f"{defaults.retain_max_text_chars:,} characters",
        "| items per retain call, and per import batch |": f"{defaults.retain_max_items:,}",
        "| tags per item |": f"{defaults.retain_max_tags} (each 1–{MAX_ID_CHARS} characters)",
        "| entity names per item |": f"{MAX_ENTITIES_PER_ITEM} (each up to {MAX_ID_CHARS}",
        "| chunk (source text) |": f"{MAX_CHUNK_CHARS:,} characters",
        "| metadata |": f"{MAX_METADATA_BYTES:,} bytes as JSON, nested at most "
        f"{MAX_METADATA_DEPTH} deep",
        "| ids, document ids |": f"{MAX_ID_CHARS} characters",
        "| bank id |": "1–128 characters: letters, digits and `_ . : @ -`",
    }
    for row, limit in rows.items():
        line = next((ln for ln in guarantees.splitlines() if ln.startswith(row)), "")
        assert limit in line, (row, line)
