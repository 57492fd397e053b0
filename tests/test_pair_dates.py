"""The date forms the cross-encoder benchmarks compare (benchmarks/pair_dates.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

import hindsight_tools.recall.pipeline as pipeline
from benchmarks.latency_ab import CONFIGURATIONS, configuration
from benchmarks.pair_dates import DATE_FORMS, Document, date_form, dated_document
from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.recall.rerank.base import rerank_document

WHEN = datetime(2023, 5, 8, 13, 56)


def test_the_full_form_is_the_engines() -> None:
    assert dated_document("full")("hi", "chat", WHEN) == rerank_document("hi", "chat", WHEN)
    assert dated_document("full")("hi", None, WHEN) == "[Date: May 08, 2023 (2023-05-08)] hi"


def test_the_short_form_writes_the_date_once_in_words() -> None:
    assert dated_document("short")("Caroline: hi", None, WHEN) == "May 8, 2023: Caroline: hi"
    assert dated_document("short")("hi", "chat", WHEN) == "May 8, 2023: chat: hi"


def test_the_undated_form_keeps_the_context() -> None:
    assert dated_document("none")("hi", "chat", WHEN) == "chat: hi"


def test_an_undated_memory_reads_alike_in_every_form() -> None:
    assert {dated_document(form)("hi", "chat", None) for form in DATE_FORMS} == {"chat: hi"}


def test_an_unknown_form_is_named_with_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"full, short, none.*'iso'"):
        dated_document("iso")


def _in_the_pipeline() -> Document:
    """The document builder a recall calls now (looked up as the pipeline does)."""
    builder: Document = vars(pipeline)["rerank_document"]
    return builder


def test_a_form_holds_inside_its_block_only() -> None:
    engines = _in_the_pipeline()
    with date_form("none"):
        assert _in_the_pipeline()("hi", None, WHEN) == "hi"
    assert _in_the_pipeline() is engines
    assert _in_the_pipeline()("hi", None, WHEN).startswith("[Date: May 08, 2023")


def test_every_latency_configuration_is_settings_and_a_known_form() -> None:
    forms = set()
    for changes in CONFIGURATIONS.values():
        overrides, form = configuration(changes)
        Settings().with_overrides(overrides)  # refuses a name that is not a setting
        forms.add(form)
    assert forms == set(DATE_FORMS)
    assert configuration({"reranker_depth_mid": 20, "date_form": "none"}) == (
        {"reranker_depth_mid": 20},
        "none",
    )
    assert configuration({}) == ({}, "full")


class _Recording:
    """A cross-encoder that keeps the documents it is given and scores them alike."""

    name = "recording"
    batch_size = 32

    def __init__(self) -> None:
        self.documents: list[str] = []

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        self.documents += documents
        return [0.5] * len(documents)


def test_a_form_reaches_the_documents_a_recall_hands_the_cross_encoder(
    settings: Settings, engine: MemoryEngine, bank: str
) -> None:
    recording = _Recording()
    when = WHEN.replace(tzinfo=UTC)
    engine.retain(bank, [{"text": f"Priya ran race {i}", "occurred_start": when} for i in range(3)])
    changed = settings.model_copy(update={"reranker_keep": 0})
    with MemoryEngine(settings=changed, reranker=recording) as recalling:
        recalling.recall(bank, "Which races did Priya run?")
        dated = list(recording.documents)
        recording.documents.clear()
        with date_form("short"):
            recalling.recall(bank, "Which races did Priya run?")
    assert dated and all(d.startswith("[Date: May 08, 2023 (2023-05-08)] ") for d in dated)
    assert recording.documents and all(d.startswith("May 8, 2023: ") for d in recording.documents)
