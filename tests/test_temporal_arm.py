"""The temporal arm, and the four arms together, on the real store."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql

from hindsight_tools import MemoryEngine
from hindsight_tools.models import FactType
from hindsight_tools.recall.arms.filters import NO_SCOPE, Scope
from hindsight_tools.recall.arms.temporal import TemporalQuery, temporal_plan
from hindsight_tools.runtime.plan import Statement, run_plan

ALL_TYPES: tuple[FactType, ...] = ("world", "experience", "observation")


def temporal(
    engine: MemoryEngine,
    bank: str,
    query: str,
    start: datetime | None,
    end: datetime | None,
    **kw: Any,
) -> dict[str, float]:
    fields: dict[str, Any] = {
        "bank_id": bank,
        "query_vector": engine._core.embedder.embed([query])[0],
        "start": start,
        "end": end,
        "types": ALL_TYPES,
        "scope": NO_SCOPE,
        "limit": 100,
        "min_similarity": 0.1,
    }
    fields.update(kw)
    return dict(engine._run(temporal_plan(TemporalQuery(**fields))))


@pytest.fixture
def diary(engine: MemoryEngine, bank: str) -> str:
    engine.retain(
        bank,
        [
            {"id": "june-hike", "text": "Went hiking in the Alps", "occurred_start": "2023-06-10"},
            {
                "id": "june-swim",
                "text": "Swam in Lake Geneva",
                "occurred_start": "2023-06-10T05:00:00Z",
            },
            {
                "id": "may-trip",
                "text": "Trip to Rome",
                "occurred_start": "2023-05-20",
                "occurred_end": "2023-06-02",
            },
            {"id": "august", "text": "Went hiking in the Pyrenees", "occurred_start": "2023-08-15"},
            {"id": "said", "text": "Mentioned a hiking plan", "mentioned_at": "2023-06-20"},
            {"id": "undated", "text": "Likes hiking"},
        ],
    )
    return bank


def test_temporal_arm_keeps_memories_overlapping_the_window(
    engine: MemoryEngine, diary: str
) -> None:
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 30, 23, 59, 59, tzinfo=UTC))
    scores = temporal(engine, diary, "hiking", *june)
    direct = {k for k, v in scores.items() if k in {"june-hike", "may-trip", "said", "june-swim"}}
    assert {"june-hike", "may-trip", "said"} <= direct
    assert "august" not in scores and "undated" not in scores
    assert max(scores, key=lambda k: scores[k]) in {"june-hike", "said"}


def test_temporal_arm_spreads_along_time_links(engine: MemoryEngine, bank: str) -> None:
    engine.retain(
        bank,
        [
            {
                "id": "in",
                "text": "Went hiking in the Alps with Sam",
                "occurred_start": "2023-06-30T20:00:00Z",
            },
            {
                "id": "next-day",
                "text": "Bought new boots",
                "occurred_start": "2023-07-01T08:00:00Z",
            },
        ],
    )
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 30, 23, 59, 59, tzinfo=UTC))
    scores = temporal(engine, bank, "hiking in the Alps", *june)
    assert scores["next-day"] == pytest.approx(scores["in"] * 0.7)


def test_open_windows(engine: MemoryEngine, diary: str) -> None:
    since_july = temporal(engine, diary, "hiking", datetime(2023, 7, 1, tzinfo=UTC), None)
    assert set(since_july) == {"august"}
    before_june = temporal(engine, diary, "trip", None, datetime(2023, 5, 31, tzinfo=UTC))
    assert set(before_june) == {"may-trip"}


def test_window_bounds_are_inclusive(engine: MemoryEngine, diary: str) -> None:
    # june-hike is the instant 2023-06-10 00:00 UTC; may-trip ends 2023-06-02 00:00 UTC.
    ending_at_the_hike = temporal(
        engine, diary, "hiking", datetime(2023, 6, 5, tzinfo=UTC), datetime(2023, 6, 10, tzinfo=UTC)
    )
    assert "june-hike" in ending_at_the_hike
    # june-swim (05:00 that day) is outside: it arrives only by spreading from june-hike.
    assert ending_at_the_hike["june-swim"] == pytest.approx(0.7 * ending_at_the_hike["june-hike"])
    starting_as_the_trip_ends = temporal(
        engine, diary, "trip", datetime(2023, 6, 2, tzinfo=UTC), datetime(2023, 6, 3, tzinfo=UTC)
    )
    assert set(starting_as_the_trip_ends) == {"may-trip"}


def test_a_memory_is_dated_by_when_it_happened_before_when_it_was_said(
    engine: MemoryEngine, bank: str
) -> None:
    # Only an end date (it happened by May 2020), told years later.
    engine.retain(
        bank,
        [
            {
                "id": "ended",
                "text": "Finished the hiking guide",
                "occurred_end": "2020-05-01",
                "mentioned_at": "2024-01-10",
            },
            # months away, so no time link joins the two
            {"id": "said", "text": "Talked about hiking", "mentioned_at": "2024-06-10"},
        ],
    )
    y2020 = (datetime(2020, 1, 1, tzinfo=UTC), datetime(2020, 12, 31, tzinfo=UTC))
    y2024 = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 12, 31, tzinfo=UTC))
    assert set(temporal(engine, bank, "hiking", *y2020)) == {"ended"}
    assert set(temporal(engine, bank, "hiking", *y2024)) == {"said"}
    # A window that ends before it starts holds nothing (and doesn't fail the recall).
    assert temporal(engine, bank, "hiking", y2024[1], y2024[0]) == {}


def test_the_window_query_can_use_the_range_index(engine: MemoryEngine, diary: str) -> None:
    plan = temporal_plan(
        TemporalQuery(
            bank_id=diary,
            query_vector=engine._core.embedder.embed(["hiking"])[0],
            start=datetime(2023, 6, 1, tzinfo=UTC),
            end=datetime(2023, 6, 30, tzinfo=UTC),
            types=ALL_TYPES,
            scope=NO_SCOPE,
            limit=100,
            min_similarity=0.1,
        )
    )
    next(plan)  # the window's size, below the bound: the window is scored row by row
    direct = plan.send([(0,)])
    plan.close()
    query = direct.query if isinstance(direct.query, sql.Composable) else sql.SQL(direct.query)
    with engine._pool.connection() as conn, conn.transaction():
        # A six-row bank is cheapest to read through the bank's btrees: take them away (the
        # transaction is rolled back) and forbid a sequential scan, so the plan uses the
        # range index only if the statement's condition matches the index expression.
        conn.execute("ALTER TABLE memory_units DROP CONSTRAINT memory_units_pkey CASCADE")
        for name in (
            "memory_units_bank_type_time",
            "memory_units_bank_time",
            "memory_units_document",
        ):
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        conn.execute("SET LOCAL enable_seqscan = off")
        lines = conn.execute(sql.SQL("EXPLAIN ") + query, direct.params).fetchall()
        plan_text = "\n".join(str(line[0]) for line in lines)
        raise psycopg.Rollback()
    # A bitmap scan or a plain one, as the shared store's statistics make it cheaper.
    assert re.search(r"Index Scan (on|using) memory_units_event_range", plan_text), plan_text
    # searched by the window, not merely read whole for its IS NOT NULL predicate
    assert "Index Cond: (tstzrange(" in plan_text and "&&" in plan_text


_DEFAULTS = "SELECT current_setting('enable_sort'), current_setting('hnsw.iterative_scan')"


def _window_run(
    engine: MemoryEngine,
    bank: str,
    exact_window_rows: int,
    limit: int = 100,
    end: datetime | None = datetime(2023, 12, 31, tzinfo=UTC),
    scope: Scope = NO_SCOPE,
) -> tuple[dict[str, float], list[Any], str, tuple[str, str]]:
    """The temporal arm from 2023 on: its scores, its statements, the ``enable_sort`` it
    left for the statements after the walk, and the settings the next transaction on the
    same connection finds."""
    query = TemporalQuery(
        bank_id=bank,
        query_vector=engine._core.embedder.embed(["hiking"])[0],
        start=datetime(2023, 1, 1, tzinfo=UTC),
        end=end,
        types=ALL_TYPES,
        scope=scope,
        limit=limit,
        min_similarity=-1.0,
        exact_window_rows=exact_window_rows,
    )
    seen: list[Any] = []

    def plan() -> Any:
        scores = yield from _counting(temporal_plan(query), seen)
        sort = yield Statement("SHOW enable_sort")
        return dict(scores), str(sort[0][0])

    with engine._pool.connection() as conn:
        scores, sort = run_plan(conn, plan())
        with conn.transaction():
            after = conn.execute(_DEFAULTS).fetchone()
    assert after is not None
    return scores, seen, sort, (str(after[0]), str(after[1]))


def _is_walk(statement: Any) -> bool:
    return "ORDER BY m.embedding <=>" in str(statement.query)


def _is_scoring(statement: Any) -> bool:
    return "ORDER BY similarity DESC" in str(statement.query)


DIARY_2023 = {"june-hike", "june-swim", "may-trip", "august", "said"}


def test_a_wide_window_is_searched_through_the_vector_index(
    engine: MemoryEngine, diary: str
) -> None:
    # Five diary memories lie in 2023, all counted by their start: a bound of 1000 keeps
    # the exact scoring, a bound of 2 is passed. A budget of 3 the walk can fill.
    exact, exact_statements, _, _ = _window_run(engine, diary, 1000, limit=3)
    wide, wide_statements, sort, after = _window_run(engine, diary, 2, limit=3)
    assert not any(_is_walk(s) for s in exact_statements)
    assert [_is_walk(s) for s in wide_statements].count(True) == 1
    assert not any(_is_scoring(s) for s in wide_statements)  # the walk filled the budget
    # A bank this small is walked whole: the walk finds what scoring every row found.
    assert wide.keys() == exact.keys() and len(wide) == 3 and set(wide) <= DIARY_2023
    assert all(abs(wide[k] - exact[k]) < 1e-6 for k in exact)
    assert sort == "on"  # sorts priced out for the walk only, not for the spread after it
    assert after == ("on", "off")  # and nothing outlives the arm's transaction

    # On six rows a sort is far cheaper than the graph: without sorts priced out the
    # planner would sort, and the statement would score every row of the window.
    walk = next(s for s in wide_statements if _is_walk(s))
    settings = wide_statements[1 : wide_statements.index(walk)]  # after the count
    with engine._pool.connection() as conn, conn.transaction():
        for setting in settings:
            conn.execute(setting.query, setting.params)
        lines = conn.execute("EXPLAIN " + walk.query, walk.params).fetchall()
        plan_text = "\n".join(str(line[0]) for line in lines)
    assert "Index Scan using memory_units_embedding" in plan_text
    assert "Sort" not in plan_text


def test_a_walk_short_of_the_budget_scores_the_window_instead(
    engine: MemoryEngine, diary: str
) -> None:
    # The walk finds the window's five memories, fewer than a budget of 100: it may have
    # stopped at its scan limit, so the window is scored after all. An open end too.
    for end in (datetime(2023, 12, 31, tzinfo=UTC), None):
        exact, _, _, _ = _window_run(engine, diary, 1000, end=end)
        wide, statements, _, _ = _window_run(engine, diary, 2, end=end)
        kinds = [
            ("walk" if _is_walk(s) else "score")
            for s in statements
            if _is_walk(s) or _is_scoring(s)
        ]
        assert kinds == ["walk", "score"]
        assert wide == exact and set(wide) >= DIARY_2023


def test_a_filtered_window_is_scored_without_counting(engine: MemoryEngine, diary: str) -> None:
    # A filter may keep only a few of a wide window's memories, which a walk would give up
    # on: the window is scored, whatever its size.
    scope = Scope(occurred_after=datetime(2023, 6, 5, tzinfo=UTC))
    scores, statements, _, _ = _window_run(engine, diary, 0, scope=scope)
    assert not any(_is_walk(s) for s in statements)
    assert not any("count(*)" in str(s.query) for s in statements)
    assert {"june-hike", "june-swim", "august", "said"} <= set(scores)
    assert "may-trip" not in scores  # it ended on 2 June, before the filter's start


def test_recall_runs_all_four_arms_and_traces_them(engine: MemoryEngine, diary: str) -> None:
    result = engine.recall(
        diary,
        "Where did I go hiking in June 2023?",
        trace=True,
        query_timestamp="2024-01-01T00:00:00Z",
    )
    assert result.trace is not None
    assert set(result.trace.arms) == {"semantic", "bm25", "graph", "temporal"}
    start, end = result.trace.time_window or (None, None)
    assert start == datetime(2023, 6, 1, tzinfo=UTC)
    assert end is not None and end.month == 6 and end.day == 30
    ranked = [m.id for m in result.memories]
    assert ranked[0] == "june-hike"  # about hiking, and dated inside the window
    hike = result.memories[ranked.index("june-hike")]
    assert {"semantic", "bm25", "temporal"} <= set(hike.source_ranks)
    assert ranked.index("august") > ranked.index("june-hike")
    arm_seconds = [a.seconds for a in result.trace.arms.values()]
    assert result.trace.stages["arms"] < sum(arm_seconds) or max(arm_seconds) < 0.005


def test_without_a_time_expression_the_temporal_arm_stays_off(
    engine: MemoryEngine, diary: str
) -> None:
    trace = engine.recall(diary, "Where did I go hiking?", trace=True).trace
    assert trace is not None and "temporal" not in trace.arms and trace.time_window is None


def test_temporal_spread_keeps_the_same_top_when_each_hop_is_capped(
    engine: MemoryEngine, bank: str
) -> None:
    # One dated memory inside June, a day of hourly memories after it (linked in time to
    # it and to each other), so the spread reaches far more nodes than a small limit.
    base = datetime(2023, 6, 30, 20, tzinfo=UTC)
    items = [{"id": "in", "text": "Went hiking in the Alps", "occurred_start": base.isoformat()}]
    items += [
        {
            "id": f"after-{h:02d}",
            "text": f"Note {h} about the trip",
            "occurred_start": (base + timedelta(hours=h + 1)).isoformat(),
        }
        for h in range(40)
    ]
    engine.retain(bank, items)
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 30, 23, 59, 59, tzinfo=UTC))
    full = temporal(engine, bank, "hiking in the Alps", *june, limit=1000)
    assert len(full) > 20  # the spread reached well beyond the cap used below
    ranked = sorted(full.items(), key=lambda pair: (-pair[1], pair[0]))
    for limit in (10, 14):  # at least the 10 entry points, so both spread from the same
        capped = temporal(engine, bank, "hiking in the Alps", *june, limit=limit)
        assert sorted(capped.items(), key=lambda pair: (-pair[1], pair[0])) == ranked[:limit]


def _counting(plan: Any, seen: list[Any]) -> Any:
    """``plan``, noting each statement it yields in ``seen``."""
    rows = None
    while True:
        try:
            statement = plan.send(rows) if rows is not None else next(plan)
        except StopIteration as done:
            return done.value
        seen.append(statement)
        rows = yield statement


def test_temporal_spread_stops_below_a_full_window_and_keeps_the_same_top(
    engine: MemoryEngine, bank: str
) -> None:
    # June holds hikes (close to the query) and errands (further); after the last hike come
    # notes every 12 hours, each linked in time (24 h) to the two before it: a chain the
    # spread walks one hop per day.
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 30, 23, 59, 59, tzinfo=UTC))
    last_hike = datetime(2023, 6, 30, 20, tzinfo=UTC)
    items = [
        {
            "id": f"hike-{d:02d}",
            "text": f"Went hiking in the Alps, stage {d}",
            "occurred_start": datetime(2023, 6, d, 9, tzinfo=UTC).isoformat(),
        }
        for d in (2, 6, 10, 14, 18, 22, 26)
    ]
    items.append(
        {
            "id": "hike-30",
            "text": "Went hiking in the Alps",
            "occurred_start": last_hike.isoformat(),
        }
    )
    items += [
        {
            "id": f"errand-{d:02d}",
            "text": f"Bought walking socks and a map, errand {d}",
            "occurred_start": datetime(2023, 6, d, 12, tzinfo=UTC).isoformat(),
        }
        for d in (4, 8, 12, 16, 20, 24)
    ]
    items += [
        {
            "id": f"after-{h:02d}",
            "text": f"Note {h} about the trip",
            "occurred_start": (last_hike + timedelta(hours=12 * (h + 1))).isoformat(),
        }
        for h in range(10)
    ]
    engine.retain(bank, items)
    vector = engine._core.embedder.embed(["hiking in the Alps"])[0]

    def run(limit: int) -> tuple[list[tuple[str, float]], int]:
        query = TemporalQuery(
            bank_id=bank,
            query_vector=vector,
            start=june[0],
            end=june[1],
            types=ALL_TYPES,
            scope=NO_SCOPE,
            limit=limit,
            min_similarity=0.1,
        )
        seen: list[Any] = []
        scores = dict(engine._run(_counting(temporal_plan(query), seen)))
        hops = sum(1 for statement in seen if "frontier" in str(statement.query))
        return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0])), hops

    # 1000 is more than the window holds: nothing to cut, the spread runs to its 0.2 stop.
    ranked, all_hops = run(1000)
    assert any(k.startswith("after-") for k, _ in ranked[:14])  # the spread matters here
    for limit in range(10, 15):
        top, hops = run(limit)
        assert top == ranked[:limit]
        assert hops < all_hops  # the window filled the arm, so the walk stopped early
