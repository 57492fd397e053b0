"""Keyword arm: BM25 equals a reference implementation; native full text; filters; term cap;
the bounded form past ``exact_postings``."""

from __future__ import annotations

from typing import Any

import bm25s
import numpy as np
import psycopg
import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.recall.arms.bm25 import (
    MAX_QUERY_TERMS,
    Bm25Backend,
    KeywordQuery,
    NativeBackend,
    opening_terms,
)
from hindsight_tools.recall.arms.filters import Scope
from tests.test_store import TinyEmbedder

DOCS = {
    "d1": "Caroline went to the LGBTQ support group and the support was powerful",
    "d2": "Melanie painted a sunrise over the lake with her kids",
    "d3": "Caroline researched adoption agencies for weeks",
    "d4": "The support group met on Tuesday; Caroline and Melanie talked about painting",
    "d5": "Melanie ran a charity race for mental health, a long race",
    "d6": "Nothing here matches anything at all",
}


@pytest.fixture
def corpus(engine: MemoryEngine, bank: str) -> str:
    engine.retain(bank, [{"id": k, "text": v, "entities": []} for k, v in DOCS.items()])
    return bank


def keyword(
    engine: MemoryEngine, bank: str, text: str, backend: Any = None, **kw: Any
) -> list[tuple[str, float]]:
    query = KeywordQuery(
        bank_id=bank,
        text=text,
        types=("world", "experience", "observation"),
        scope=Scope(tags=kw.get("tags"), tags_match=kw.get("tags_match", "any")),
        limit=kw.get("limit", 100),
        language="english",
    )
    return engine._run((backend or Bm25Backend()).plan(query))


def lexemes(db: psycopg.Connection[tuple[Any, ...]], bank: str) -> dict[str, list[str]]:
    rows = db.execute(
        "SELECT m.id, t.lexeme, cardinality(t.positions) FROM memory_units m,"
        " unnest(m.search_vector) t WHERE m.bank_id = %s ORDER BY m.id, t.lexeme",
        (bank,),
    ).fetchall()
    tokens: dict[str, list[str]] = {k: [] for k in DOCS}
    for unit, lexeme, tf in rows:
        tokens[unit].extend([lexeme] * tf)
    return tokens


@pytest.mark.parametrize(
    "query", ["support group Caroline", "Melanie race", "painting sunrise lake kids", "adoption"]
)
def test_bm25_scores_equal_the_reference(
    engine: MemoryEngine, corpus: str, db: psycopg.Connection[tuple[Any, ...]], query: str
) -> None:
    tokens = lexemes(db, corpus)
    ids = list(tokens)
    reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    reference.index([tokens[i] for i in ids], show_progress=False)
    row = db.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (query,)).fetchone()
    assert row is not None
    query_tokens = [t for t in row[0] if any(t in doc for doc in tokens.values())]
    expected = reference.get_scores(query_tokens)
    got = dict(keyword(engine, corpus, query))
    for doc_id, score in zip(ids, expected, strict=True):
        if score > 0:
            assert got[doc_id] == pytest.approx(float(score), rel=1e-5), doc_id
        else:
            assert doc_id not in got
    assert list(got) == sorted(got, key=lambda d: -got[d])


def test_bm25_prefers_rare_terms(engine: MemoryEngine, corpus: str) -> None:
    # "adoption" is in one memory, "Caroline" in three: the rare word decides.
    hits = keyword(engine, corpus, "Caroline adoption")
    assert hits[0][0] == "d3"


def test_statistics_follow_updates_and_deletes(
    engine: MemoryEngine, corpus: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    engine.retain(corpus, [{"id": "d3", "text": "Caroline adopted a puppy", "entities": []}])
    assert keyword(engine, corpus, "agencies") == []  # the old text is gone from the index
    df = dict(
        db.execute("SELECT term, df FROM bank_terms WHERE bank_id = %s", (corpus,)).fetchall()
    )
    assert df["carolin"] == 3 and "agenc" not in df
    stats = db.execute(
        "SELECT doc_count, total_length FROM banks WHERE bank_id = %s", (corpus,)
    ).fetchone()
    lengths = db.execute(
        "SELECT sum(search_length) FROM memory_units WHERE bank_id = %s", (corpus,)
    ).fetchone()
    assert stats is not None and lengths is not None and stats == (6, lengths[0])


def test_postings_follow_a_changed_fact_type_and_length(
    engine: MemoryEngine, bank: str, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    engine.retain(bank, [{"id": "u", "text": "Zebra", "fact_type": "world"}])
    engine.retain(bank, [{"id": "u", "text": "Zebra zebra stripes", "fact_type": "experience"}])
    rows = db.execute(
        "SELECT DISTINCT mt.fact_type, mt.doc_length = m.search_length FROM memory_terms mt"
        " JOIN memory_units m ON m.bank_id = mt.bank_id AND m.id = mt.unit_id"
        " WHERE mt.bank_id = %s",
        (bank,),
    ).fetchall()
    assert rows == [("experience", True)]
    query = KeywordQuery(bank, "zebra", ("world",), Scope(), 10, "english")
    assert engine._run(Bm25Backend().plan(query)) == []


def test_native_backend_matches_any_term(engine: MemoryEngine, corpus: str) -> None:
    hits = dict(keyword(engine, corpus, "adoption race", backend=NativeBackend()))
    assert set(hits) == {"d3", "d5"}
    assert all(score > 0 for score in hits.values())


@pytest.mark.parametrize("backend", [Bm25Backend(), NativeBackend()])
def test_keyword_filters_apply_inside_the_query(
    engine: MemoryEngine, bank: str, backend: Any
) -> None:
    engine.retain(
        bank,
        [
            {
                "id": f"t{i}",
                "text": f"Zebra sighting number {i}",
                "tags": ["safari"] if i % 2 else [],
            }
            for i in range(10)
        ],
    )
    hits = keyword(
        engine, bank, "zebra", backend=backend, tags=["safari"], tags_match="any_strict", limit=3
    )
    assert len(hits) == 3  # the limit is filled from tagged memories only
    assert all(int(h[0][1:]) % 2 for h in hits)


def test_long_queries_keep_the_rarest_terms(engine: MemoryEngine, bank: str) -> None:
    common = [f"word{i}" for i in range(MAX_QUERY_TERMS)]
    engine.retain(
        bank,
        [{"text": " ".join(common), "entities": []} for _ in range(3)]
        + [{"id": "rare", "text": "xylophone " + " ".join(common), "entities": []}],
    )
    hits = keyword(engine, bank, " ".join([*common, "xylophone"]))
    assert hits[0][0] == "rare"
    assert np.isfinite([score for _, score in hits]).all()


def test_query_without_known_terms_returns_nothing(engine: MemoryEngine, corpus: str) -> None:
    assert keyword(engine, corpus, "the of and") == []
    assert keyword(engine, corpus, "qwertyuiop") == []
    assert keyword(engine, corpus, "'; DROP TABLE memory_units; -- & | ! :*") == []


@pytest.mark.parametrize(
    ("postings", "bound", "opening"),
    [
        ([3, 5], 10, 2),  # all fit: exact
        ([3, 5, 100], 10, 2),  # the longest prefix that fits
        ([4, 6, 7], 10, 2),  # a total equal to the bound fits
        ([50, 60], 10, 1),  # the rarest term opens even past the bound
        ([50, 50, 50], 10, 1),
        ([1, 100], 0, 1),
        ([], 10, 0),
    ],
)
def test_opening_terms(postings: list[int], bound: int, opening: int) -> None:
    assert opening_terms(postings, bound) == opening


# "okapi" is in four memories, "river" and "zebra" in many: past a bound of 4 postings the
# rare word chooses the candidates and the common words only score them.
BOUNDED_DOCS = {
    **{f"z{i}": f"Zebra by the river, sighting {i}" for i in range(12)},
    **{f"r{i}": f"The river ran high, day {i}" for i in range(6)},
    "o1": "An okapi drank at the river next to a zebra",
    "o2": "The okapi hid in the forest",
    "o3": "Okapi and zebra, both striped",
    "o4": "Okapi okapi river river river, a long long long note about the river bank",
}


@pytest.mark.parametrize("tags", [None, ["even"]])
def test_bounded_form_keeps_the_rare_terms_memories_with_their_full_scores(
    engine: MemoryEngine, bank: str, tags: list[str] | None
) -> None:
    engine.retain(
        bank,
        [
            {"id": k, "text": v, "entities": [], "tags": ["even"] if int(k[1:]) % 2 == 0 else []}
            for k, v in BOUNDED_DOCS.items()
        ],
    )
    strict = {"tags": tags, "tags_match": "any_strict"} if tags else {}
    query = "okapi river zebra"
    exact = dict(keyword(engine, bank, query, Bm25Backend(exact_postings=10**9), **strict))
    bounded = keyword(engine, bank, query, Bm25Backend(exact_postings=4), **strict)
    rare = {k for k in BOUNDED_DOCS if k.startswith("o") and (not tags or int(k[1:]) % 2 == 0)}
    assert {k for k, _ in bounded} == rare
    assert len(exact) > len(rare)  # the exact form also finds river and zebra alone
    for doc_id, score in bounded:  # the common words' shares are added, not dropped
        assert score == pytest.approx(exact[doc_id], rel=1e-9), doc_id
    scores = [score for _, score in bounded]
    assert scores == sorted(scores, reverse=True)


def test_the_setting_reaches_the_keyword_arm(engine: MemoryEngine, settings: Settings) -> None:
    own = settings.with_overrides({"database_url": engine.database_url, "bm25_exact_postings": 7})
    with MemoryEngine(settings=own) as bounded:
        assert bounded._core.recall_services.keyword == Bm25Backend(exact_postings=7)


# Two opening terms (giraffe 3, okapi 5) within a bound of 8 postings; river is late. In the
# experience memories the late share decides the top 2: e2 (okapi and river) passes e3
# (giraffe alone) only with it.
TYPED_DOCS = {
    "e1": ("experience", "okapi giraffe"),
    "e2": ("experience", "okapi river river"),
    "e3": ("experience", "giraffe seen once in a long walk through the park today"),
    "w1": ("world", "okapi river"),
    "w2": ("world", "giraffe okapi river"),
    "o1": ("observation", "okapi river"),
    **{f"r{i}": ("world", f"river note {i}") for i in range(20)},
}


def test_bounded_form_reads_two_opening_terms_and_keeps_each_types_limit(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(
        bank,
        [{"id": k, "text": t, "fact_type": f, "entities": []} for k, (f, t) in TYPED_DOCS.items()],
    )

    def ask(bound: int, limit: int) -> list[tuple[str, float]]:
        query = KeywordQuery(
            bank, "okapi giraffe river", ("world", "experience"), Scope(), limit, "english"
        )
        return engine._run(Bm25Backend(exact_postings=bound).plan(query))

    exact = dict(ask(10**9, 100))
    assert "o1" not in exact  # not an asked type
    expected = []
    for fact_type in ("world", "experience"):
        found = [
            k
            for k, (f, t) in TYPED_DOCS.items()
            if f == fact_type and ("okapi" in t or "giraffe" in t)
        ]
        expected += sorted(found, key=lambda k: (-exact[k], k))[:2]
    assert "e2" in expected and "e3" not in expected  # the late share reorders
    bounded = ask(8, 2)
    assert [k for k, _ in bounded] == expected
    for k, score in bounded:
        assert score == pytest.approx(exact[k], rel=1e-9)


# "okapi" in six memories, three short and three a little longer with "zebra" too: past a
# bound of 3, the rarest term alone is over it, so only its three best memories by its own
# share stay candidates, unless a fact type's limit asks for more.
CUT_DOCS = {
    "s1": "okapi",
    "s2": "okapi seen",
    "s3": "an okapi",
    **{f"l{i}": f"zebra okapi {i}" for i in range(3)},
    **{f"z{i}": f"zebra herd {i}" for i in range(5)},
}


def test_candidates_are_cut_to_the_bound_when_the_rarest_term_passes_it(
    engine: MemoryEngine, bank: str
) -> None:
    engine.retain(bank, [{"id": k, "text": v, "entities": []} for k, v in CUT_DOCS.items()])
    by_okapi = keyword(engine, bank, "okapi", Bm25Backend(exact_postings=10**9))
    best_three = {k for k, _ in by_okapi[:3]}
    assert best_three == {"s1", "s2", "s3"}  # short memories score the term highest
    exact = keyword(engine, bank, "okapi zebra", Bm25Backend(exact_postings=10**9), limit=2)
    assert exact[0][0].startswith("l")  # with both words, a longer memory leads

    cut = keyword(engine, bank, "okapi zebra", Bm25Backend(exact_postings=3), limit=2)
    assert [k for k, _ in cut] == [k for k, _ in by_okapi[:2]]
    exact_scores = dict(keyword(engine, bank, "okapi zebra", Bm25Backend(exact_postings=10**9)))
    for k, score in cut:
        assert score == pytest.approx(exact_scores[k], rel=1e-9)

    # a limit above the bound keeps that many candidates: every okapi memory, zebra added
    wide = keyword(engine, bank, "okapi zebra", Bm25Backend(exact_postings=3), limit=10)
    assert {k for k, _ in wide} == {k for k in CUT_DOCS if "okapi" in CUT_DOCS[k]}
    for k, score in wide:
        assert score == pytest.approx(exact_scores[k], rel=1e-9)


_POSTINGS = """
INSERT INTO banks (bank_id, doc_count, total_length) VALUES (%(bank)s, %(n)s, %(n)s * 3);
INSERT INTO memory_terms (bank_id, term, unit_id, tf, fact_type, doc_length)
SELECT %(bank)s, t.term, 'u' || i, 1, 'world', 3
FROM generate_series(1, %(n)s) AS i,
     LATERAL (VALUES ('filler' || (i %% 500)), ('common'),
                     (CASE WHEN i <= 20 THEN 'okapi' END)) t(term)
WHERE t.term IS NOT NULL;
INSERT INTO bank_terms (bank_id, term, df)
SELECT bank_id, term, count(*) FROM memory_terms WHERE bank_id = %(bank)s GROUP BY 1, 2;
"""


def _fill(conn: psycopg.Connection[tuple[Any, ...]], bank: str, memories: int) -> None:
    # the statistics must stay those of the test's own ANALYZE, whatever autovacuum does
    for table in ("memory_terms", "bank_terms", "banks"):
        conn.execute(
            psycopg.sql.SQL("ALTER TABLE {} SET (autovacuum_enabled = off)").format(
                psycopg.sql.Identifier(table)
            )
        )
    for statement in _POSTINGS.strip().split(";\n"):
        conn.execute(statement, {"bank": bank, "n": memories})


def _loops_of(
    engine: MemoryEngine, bank: str, text: str, backend: Bm25Backend, node: str
) -> tuple[list[int], str]:
    """Run the arm for ``text`` on ``bank`` (expecting its ten best), then EXPLAIN ANALYZE
    it: the loops of every plan node whose line holds ``node``, and the plan."""
    from benchmarks.recall_bench_timing import explained  # the benchmarks' EXPLAIN runner

    query = KeywordQuery(
        bank_id=bank, text=text, types=("world",), scope=Scope(), limit=10, language="english"
    )
    assert len(engine._run(backend.plan(query))) == 10
    plan = explained(engine, backend.plan(query), "ANALYZE")
    loops = [
        int(line.split("loops=")[1].rstrip(")"))
        for line in plan
        if node in line and "loops=" in line
    ]
    return loops, "\n".join(plan)


def test_a_bank_filled_after_the_last_analyze_is_not_read_posting_by_posting(
    settings: Settings, scratch_db: str
) -> None:
    """PostgreSQL estimates a bank it has no statistics for at one row; the arm must not
    then look up every posting of that bank in ``bank_terms`` (8,000 here), at most those
    of the query's term (20)."""
    with (
        MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine,
        psycopg.connect(scratch_db, autocommit=True) as conn,
    ):
        _fill(conn, "old", 4000)
        conn.execute("ANALYZE")
        _fill(conn, "new", 4000)
        loops, plan = _loops_of(engine, "new", "okapi", Bm25Backend(), "on bank_terms")
    assert loops and max(loops) <= 20, plan


def test_the_bounded_form_sums_the_late_terms_once_not_once_per_candidate(
    settings: Settings, scratch_db: str
) -> None:
    """Past the bound, the late terms' shares are summed once for all candidates and then
    joined to them; an underestimate of the candidates must not turn that into a sum
    redone for every candidate (once 28 s for one question in a bank of 1,000,000)."""
    with (
        MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine,
        psycopg.connect(scratch_db, autocommit=True) as conn,
    ):
        _fill(conn, "big", 4000)
        conn.execute("ANALYZE")
        # "common" is in all 4,000 memories: past a bound of 100, the bounded form
        bounded = Bm25Backend(exact_postings=100)
        loops, plan = _loops_of(engine, "big", "okapi common", bounded, "Aggregate")
    assert loops and max(loops) == 1, plan
