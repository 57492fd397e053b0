"""One recall, end to end, as an engine program (see ``hindsight_tools.runtime.program``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from hindsight_tools.encoders.embedding import Embedder, embed_texts
from hindsight_tools.encoders.late_interaction import LateInteractionEncoder
from hindsight_tools.encoders.tokens import truncate_to_tokens
from hindsight_tools.models import (
    ArmTrace,
    RecalledChunk,
    RecalledMemory,
    RecallRequest,
    RecallResult,
    RecallTrace,
    Scores,
)
from hindsight_tools.query.entities import EntityExtractor
from hindsight_tools.query.events import event_relation
from hindsight_tools.query.time_window import TimeWindow, extract_time_window
from hindsight_tools.recall.anchored import anchored_window, event_anchor
from hindsight_tools.recall.arms.base import ARM_ORDER, ArmName, ranked
from hindsight_tools.recall.arms.bm25 import KeywordBackend, KeywordQuery
from hindsight_tools.recall.arms.filters import request_scope
from hindsight_tools.recall.arms.graph import GraphQuery, graph_plan
from hindsight_tools.recall.arms.semantic import semantic_plan
from hindsight_tools.recall.arms.temporal import TemporalQuery, temporal_plan
from hindsight_tools.recall.budget import recall_budget, rerank_depth
from hindsight_tools.recall.fusion import reciprocal_rank_fusion
from hindsight_tools.recall.hydrate import (
    MemoryRow,
    StoredReadings,
    chunks_plan,
    memories_plan,
    token_vectors_plan,
)
from hindsight_tools.recall.instructions import is_standing_instruction, place_instructions
from hindsight_tools.recall.packing import fill_chunks, fill_token_budget
from hindsight_tools.recall.periods import named_periods
from hindsight_tools.recall.prerank import (
    RankedCandidate,
    candidate_order,
    kept_places,
    length_prior,
    rank_final,
    rerank_head,
    with_reading_in_context,
)
from hindsight_tools.recall.rerank.base import RerankChain, RerankOutcome, rerank_document
from hindsight_tools.recall.scoring import (
    Evidence,
    ScoringWeights,
    temporal_signal,
    window_weight,
)
from hindsight_tools.runtime.plan import Plan, with_statement_timeout
from hindsight_tools.runtime.program import Blocking, Parallel, ParallelResult, Program
from hindsight_tools.settings import Settings

MAX_QUERY_TOKENS = 500


@dataclass(frozen=True)
class RecallServices:
    settings: Settings
    embedder: Embedder
    reranker: RerankChain
    entity_extractor: EntityExtractor
    keyword: KeywordBackend
    late_interaction: LateInteractionEncoder | None = None


def arm_plans(
    services: RecallServices,
    bank_id: str,
    request: RecallRequest,
    query: str,
    query_vector: Any,
    window: TimeWindow | None,
    budget: int,
) -> dict[ArmName, Plan[list[tuple[str, float]]]]:
    """The database query of every enabled arm, each bounded by the recall budget."""
    settings = services.settings
    types = request.fact_types()
    scope = request_scope(request)
    plans: dict[ArmName, Plan[list[tuple[str, float]]]] = {}
    enabled = set(settings.recall_arms)
    if "semantic" in enabled:
        plans["semantic"] = semantic_plan(
            bank_id,
            query_vector,
            types,
            scope,
            limit=max(budget, 20),
            min_similarity=settings.semantic_min_similarity,
        )
    if "bm25" in enabled:
        plans["bm25"] = services.keyword.plan(
            KeywordQuery(
                bank_id=bank_id,
                text=query,
                types=types,
                scope=scope,
                limit=budget,
                language=settings.text_search_extension_native_language,
            )
        )
    if "graph" in enabled:
        plans["graph"] = graph_plan(
            GraphQuery(
                bank_id=bank_id,
                query_vector=query_vector,
                query_entities=tuple(services.entity_extractor(query)),
                types=types,
                scope=scope,
                limit=budget,
                min_similarity=settings.semantic_min_similarity,
                per_entity_limit=settings.graph_per_entity_limit,
                timeout_seconds=_graph_timeout(settings),
                entity_weighting=settings.graph_entity_weighting,
            )
        )
    if "temporal" in enabled and window is not None:
        plans["temporal"] = temporal_plan(
            TemporalQuery(
                bank_id=bank_id,
                query_vector=query_vector,
                start=window.start,
                end=window.end,
                types=types,
                scope=scope,
                limit=budget,
                min_similarity=settings.temporal_min_similarity,
                exact_window_rows=settings.temporal_exact_window_rows,
            )
        )
    return plans


def recall_program(
    services: RecallServices, bank_id: str, request: RecallRequest
) -> Program[RecallResult]:
    settings = services.settings
    stages: dict[str, float] = {}
    started = time.perf_counter()
    query = truncate_to_tokens(request.query, MAX_QUERY_TOKENS)
    late = services.late_interaction
    encoders = {"embed": Blocking(lambda: embed_texts(services.embedder, [query])[0])}
    if late is not None:
        # Side by side: on a short question neither model keeps two cores busy; p50 10 ms
        # against 14 one after the other (150 dev-set questions).
        encoders["late_interaction_query"] = Blocking(lambda: late.encode_query(query))
    encoded: ParallelResult = yield Parallel(encoders)
    for name, (_, seconds) in encoded.items():
        stages[name] = seconds
    query_vector = encoded["embed"][0]
    query_tokens: Any = None if late is None else encoded["late_interaction_query"][0]
    budget = recall_budget(request.budget, request.max_tokens, settings)
    mark = time.perf_counter()
    window = extract_time_window(query, request.now())
    stages["time_parse"] = time.perf_counter() - mark

    mark = time.perf_counter()
    limit = settings.recall_statement_timeout
    plans: dict[str, Plan[Any]] = {
        str(name): with_statement_timeout(plan, limit)
        for name, plan in arm_plans(
            services, bank_id, request, query, query_vector, window, budget
        ).items()
    }
    arm_output: ParallelResult = yield Parallel(plans)
    stages["arms"] = time.perf_counter() - mark
    results = [
        ranked(name, arm_output[name][0], arm_output[name][1])
        for name in ARM_ORDER
        if name in arm_output
    ]

    mark = time.perf_counter()
    fused = reciprocal_rank_fusion(results)
    stages["fusion"] = time.perf_counter() - mark

    head = fused[: settings.reranker_max_candidates]
    ids = [c.id for c in head]
    fetch: dict[str, Plan[Any]] = {"memories": memories_plan(bank_id, ids)}
    if late is not None:
        fetch["token_vectors"] = token_vectors_plan(
            bank_id, ids, in_context=settings.late_interaction_context
        )
    mark = time.perf_counter()
    hydrated: ParallelResult = yield Parallel(
        {name: with_statement_timeout(plan, limit) for name, plan in fetch.items()}
    )
    stages["hydrate"] = time.perf_counter() - mark
    rows: dict[str, MemoryRow] = hydrated["memories"][0]
    head = [c for c in head if c.id in rows]  # a memory deleted since the arms ran is dropped

    prerank: dict[str, float] | None = None
    if late is not None:
        mark = time.perf_counter()
        stored: StoredReadings = hydrated["token_vectors"][0]
        texts = {c.id: rows[c.id].text for c in head}

        def readings() -> dict[str, float] | None:
            own = late.candidate_scores(query_tokens, texts, stored.own)
            if own is None:
                return None
            read = late.stored_scores(query_tokens, stored.in_context)
            return with_reading_in_context(own, read)

        prerank = yield Blocking(readings)
        if prerank is not None and settings.late_interaction_length_prior > 0:
            prerank = length_prior(
                prerank,
                {memory_id: len(text) for memory_id, text in texts.items()},
                settings.late_interaction_length_prior,
            )
        stages["late_interaction"] = time.perf_counter() - mark

    mark = time.perf_counter()
    chain = services.reranker
    depth = len(head) if chain.is_passthrough else rerank_depth(request.budget, settings)
    weights = _weights(settings)
    evidence = {c.id: _evidence(rows[c.id]) for c in head}
    # A vague window ("recently") gathers candidates through the temporal arm but doesn't
    # rank: it has no edges to be inside of.
    named_window = None if window is None or window.vague else window
    ranking_window = named_window
    # A question that names no period may name one by an event ("Why did she leave?"),
    # dated by its best match: the first of the order the cross-encoder's head is cut from.
    anchor: tuple[str, datetime] | None = None
    relation = (
        event_relation(query)
        if ranking_window is None and settings.event_window_alpha > 0
        else None
    )
    if relation is not None:
        by_match = candidate_order(head, prerank)
        anchor = event_anchor([(c.id, evidence[c.id].date) for c in by_match])
        if anchor is not None:
            ranking_window = anchored_window(relation, anchor[1], settings.event_window_days)
            weights = replace(weights, temporal_alpha=settings.event_window_alpha)
    in_window: dict[str, float] | None = None
    if ranking_window is not None:
        by_wording = (
            head if prerank is None else sorted(head, key=lambda c: -prerank.get(c.id, -1.0))
        )
        named = named_periods(
            [(c.id, rows[c.id].text, evidence[c.id].date) for c in by_wording],
            {c.id: temporal_signal(evidence[c.id], ranking_window) >= 1.0 for c in head},
        )
        for memory_id, period in named.items():
            evidence[memory_id] = replace(evidence[memory_id], named=period)
        in_window = {
            c.id: window_weight(
                weights.temporal_alpha, temporal_signal(evidence[c.id], ranking_window)
            )
            for c in head
        }
    keep = kept_places(
        settings.reranker_keep,
        prerank=prerank,
        window=ranking_window,
        cross_encoder=not chain.is_passthrough,
    )
    leading, to_score, rest = rerank_head(head, depth, prerank, in_window, keep)
    documents = [
        rerank_document(rows[c.id].text, rows[c.id].context, rows[c.id].occurred_start)
        for c in to_score
    ]
    outcome: RerankOutcome = yield Blocking(
        lambda: chain.rerank(query, documents, timeout=settings.reranker_timeout)
    )
    stages["rerank"] = time.perf_counter() - mark

    mark = time.perf_counter()
    candidates = leading + to_score + rest
    scored = rank_final(
        candidates,
        outcome,
        [evidence[c.id] for c in candidates],
        now=request.now(),
        window=ranking_window,
        weights=weights,
        prerank=prerank,
        kept=len(leading),
    )
    instructions = (
        {c.id for c in head if is_standing_instruction(rows[c.id].text)}
        if settings.instruction_rank > 0
        else set()
    )
    # a question about a period it names asks what happened then; a rule has no period to
    # be in. One placed by an event ("Why did my build fail?") may still be the rule's.
    placing = set() if named_window is not None else instructions
    scored = place_instructions(scored, placing, settings.instruction_rank)
    stages["scoring"] = time.perf_counter() - mark

    mark = time.perf_counter()
    packed = fill_token_budget([(r, rows[r.candidate.id].text) for r in scored], request.max_tokens)
    memories = [
        _memory(
            rows[r.candidate.id],
            r,
            tokens,
            None if prerank is None else prerank.get(r.candidate.id),
            r.candidate.id in instructions,
        )
        for r, tokens in packed
    ]
    stages["token_filter"] = time.perf_counter() - mark

    chunks: list[RecalledChunk] = []
    if request.include_chunks:
        chunk_ids = list(
            dict.fromkeys(
                chunk_id for r in scored if (chunk_id := rows[r.candidate.id].chunk_id) is not None
            )
        )
        fetched: ParallelResult = yield Parallel(
            {"chunks": with_statement_timeout(chunks_plan(bank_id, chunk_ids), limit)}
        )
        chunk_rows = fetched["chunks"][0]
        ordered = [chunk_rows[i] for i in chunk_ids if i in chunk_rows]
        chunks = [
            RecalledChunk(
                chunk_id=row.chunk_id,
                document_id=row.document_id,
                chunk_index=row.chunk_index,
                text=text,
                truncated=truncated,
                tokens=tokens,
            )
            for row, (text, tokens, truncated) in zip(
                ordered,
                fill_chunks([r.text for r in ordered], request.max_chunk_tokens),
                strict=False,
            )
        ]

    trace = None
    if request.trace:
        shown_window = ranking_window if anchor is not None else window
        stages["total"] = time.perf_counter() - started
        trace = RecallTrace(
            arms={r.arm: ArmTrace(candidates=len(r.hits), seconds=r.seconds) for r in results},
            time_window=(None if shown_window is None else (shown_window.start, shown_window.end)),
            event_anchor=None if anchor is None else anchor[0],
            recall_budget=budget,
            reranker=outcome.reranker,
            reranked=len(outcome.scores),
            kept=len(leading),
            late_interaction=0 if prerank is None else len(prerank),
            reranker_timed_out=outcome.timed_out,
            reranker_failed=list(outcome.failed),
            stages=stages,
        )
    return RecallResult(memories=memories, chunks=chunks, trace=trace)


def _graph_timeout(settings: Settings) -> float:
    """The graph arm gives up its entity signal rather than outlive the recall's statement
    limit, which would fail the whole recall."""
    if settings.recall_statement_timeout > 0:
        return min(settings.graph_timeout, settings.recall_statement_timeout)
    return settings.graph_timeout


def _evidence(row: MemoryRow) -> Evidence:
    return Evidence(
        date=row.occurred_start or row.mentioned_at,
        proof_count=row.proof_count,
        end=row.occurred_end if row.occurred_start is not None else None,
    )


def _weights(settings: Settings) -> ScoringWeights:
    return ScoringWeights(
        recency_alpha=settings.recency_alpha,
        temporal_alpha=settings.temporal_alpha,
        proof_alpha=settings.proof_count_alpha,
        recency=settings.recency_function,
        half_life_days=settings.recency_half_life_days,
    )


def _memory(
    row: MemoryRow,
    ranked: RankedCandidate,
    tokens: int,
    late_interaction: float | None,
    instruction: bool,
) -> RecalledMemory:
    candidate = ranked.candidate
    scores = Scores(
        final=ranked.final,
        cross_encoder=ranked.cross_encoder,
        late_interaction=late_interaction,
        rrf=candidate.rrf,
        semantic=candidate.arm_scores.get("semantic"),
        bm25=candidate.arm_scores.get("bm25"),
        graph=candidate.arm_scores.get("graph"),
        temporal=candidate.arm_scores.get("temporal"),
    )
    return RecalledMemory(
        id=row.id,
        text=row.text,
        fact_type=row.fact_type,  # type: ignore[arg-type]
        context=row.context,
        occurred_start=row.occurred_start,
        occurred_end=row.occurred_end,
        mentioned_at=row.mentioned_at,
        tags=list(row.tags),
        entities=list(row.entities),
        document_id=row.document_id,
        chunk_id=row.chunk_id,
        metadata=row.metadata,
        scores=scores,
        source_ranks={str(arm): rank for arm, rank in candidate.source_ranks.items()},
        tokens=tokens,
        kept=ranked.kept,
        instruction=instruction,
    )
