"""Keyword arm: exact terms, names and identifiers, with pluggable backends (docs/design.md,
The four arms).

``HINDSIGHT_API_TEXT_SEARCH_EXTENSION`` picks the backend:

* ``bm25`` — Okapi BM25 computed in stock PostgreSQL from per-bank term statistics that
  retain keeps current (``memory_terms``, ``bank_terms``, ``banks.doc_count``); the Lucene
  form ``Σ ln(1 + (N − df + 0.5)/(df + 0.5)) · tf / (tf + k1·(1 − b + b·dl/avgdl))``;
* ``native`` — PostgreSQL full text, ``ts_rank_cd`` over text + context + entity names,
  matching any query term (no IDF: common words weigh as much as names).

Both use the same lexemes (``to_tsvector`` in the configured language). Queries with more
than ``MAX_QUERY_TERMS`` terms keep the rarest ones in the bank. A further backend (such as
ParadeDB's ``pg_search``) is one more :class:`KeywordBackend`.

BM25 sums every posting of the query's terms while they number at most ``exact_postings``
(``HINDSIGHT_API_BM25_EXACT_POSTINGS``), and is then exact. Past that, summing the postings
of common words, and sorting every memory they reach, would make the arm's work grow with
the bank, so it turns to the *continue* strategy of term-at-a-time retrieval with limited
accumulators (Moffat and Zobel, "Self-indexing inverted files for fast text retrieval",
1996): the rarest terms, as many as fit the bound and at least one, are read in full and
decide which memories are candidates; each remaining term's postings only add their share
to those candidates. A memory with none of the opening terms is left to the other arms.
The late terms' postings are looked up by candidate, so their cost follows the candidates
rather than the late terms' postings. The candidates too number at most the bound, as
Moffat and Zobel's accumulators do: when the rarest term alone has more postings, the
memories it scores best (short ones, or ones that repeat it) are kept, and the rest are
left to the other arms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from psycopg import sql

from hindsight_tools.models import FactType
from hindsight_tools.recall.arms.filters import Scope, scope_condition
from hindsight_tools.runtime.plan import Plan, Statement

MAX_QUERY_TERMS = 16
KeywordBackendName = Literal["bm25", "native"]


@dataclass(frozen=True)
class KeywordQuery:
    bank_id: str
    text: str
    types: tuple[FactType, ...]
    scope: Scope
    limit: int
    language: str


class KeywordBackend(Protocol):
    @property
    def name(self) -> str: ...

    def plan(self, query: KeywordQuery) -> Plan[list[tuple[str, float]]]: ...


# The query's lexemes that occur in the bank, rarest first (ties by term, for determinism).
_RAREST_TERMS = """
SELECT bt.term, bt.df FROM bank_terms bt
WHERE bt.bank_id = %(bank)s
  AND bt.term = ANY(tsvector_to_array(to_tsvector(%(language)s::regconfig, %(query)s)))
ORDER BY bt.df, bt.term
LIMIT %(max_terms)s
"""

# The bank's totals and the query terms' IDF; ``opens`` marks the terms the bounded form
# reads in full (all of them in the exact form).
_TERMS = """
WITH stats AS (
    SELECT doc_count::float8 AS n,
           greatest(total_length::float8 / nullif(doc_count, 0), 1e-9) AS avgdl
    FROM banks WHERE bank_id = %(bank)s
), q AS (
    SELECT bt.term, bt.term = ANY(%(opening)s) AS opens,
           ln(1 + (stats.n - bt.df + 0.5) / (bt.df + 0.5)) AS idf
    FROM bank_terms bt, stats
    WHERE bt.bank_id = %(bank)s AND bt.term = ANY(%(terms)s)
)"""

# One posting's share of a memory's score (Lucene's BM25).
_SHARE = "q.idf * mt.tf / (mt.tf + %(k1)s * (1 - %(b)s + %(b)s * mt.doc_length / stats.avgdl))"


def _found(also: str = "") -> str:
    """The memories found, summed over every posting of the read terms; ``also`` is one
    more condition on the postings, ending in AND."""
    return f"""
    SELECT mt.unit_id AS id, mt.fact_type, sum({_SHARE}) AS score
    FROM q
    JOIN memory_terms mt ON mt.bank_id = %(bank)s AND mt.term = q.term
    CROSS JOIN stats
    {{scope_join}}
    WHERE q.opens AND {also}mt.fact_type = ANY(%(types)s)
    GROUP BY mt.unit_id, mt.fact_type"""


_FOUND = _found()
# The exact form names the read terms as constants too. PostgreSQL's statistics on
# ``bank_id`` know the banks of the last ANALYZE, so a bank filled since then looks like one
# row; the planner then walked all of that bank's postings and looked each one's term up in
# ``bank_terms``. With the constants it filters them by term instead, and with fresh
# statistics it reads only the read terms' postings either way. A LoCoMo conversation
# retained after the last ANALYZE of a store that also held BEAM: 24 ms before, 4 ms now,
# 2 ms after an ANALYZE. The bounded forms don't: the constant, counted as a second
# condition on the term, made the planner expect one memory found, and it then joined the
# late terms' shares to 20,000 candidates by a nested loop, 28 s for one question in a bank
# of 1,000,000 (docs/decisions/2026-12-06-keyword-arm-for-banks-without-statistics.md).
_FOUND_NAMED = _found("mt.term = ANY(%(opening)s) AND ")

# Each fact type's best by a bounded (top-N) sort of the scored memories, computed once:
# a window function over them sorted every scored memory, and with the postings of common
# words in a bank of 300,000 that sort took about a third of the arm's time.
_BEST_OF_EACH_TYPE = """
SELECT h.id, h.score
FROM unnest(%(types)s::text[]) AS t(fact_type)
CROSS JOIN LATERAL (
    SELECT id, score FROM scored WHERE scored.fact_type = t.fact_type
    ORDER BY score DESC, id
    LIMIT %(limit)s
) h"""

_BM25 = f"""{_TERMS}, scored AS MATERIALIZED ({_FOUND_NAMED}
){_BEST_OF_EACH_TYPE}
"""

# When the rarest term alone passes the bound, the candidates are its best memories by its
# own share, as many as the bound allows (and never fewer than a fact type's limit). In the
# scale benchmark's bank of 1,000,000, a question whose words are all common reached up to
# 53,000 candidates, and looking up their late terms took most of its time; cut to 20,000,
# the arm's p95 fell by a fifth and it kept 0.995 of exact BM25's top 10 on the questions
# this was chosen on, 0.976 on others (docs/decisions/2026-12-06-candidates-bounded-too.md).
_BEST_CANDIDATES = """
    ORDER BY score DESC, id
    LIMIT greatest(%(candidates)s, %(limit)s)"""


# The continue strategy: the opening terms' postings are read and summed as above; the
# late terms' shares are added to the memories found, and only to them. Each late term is
# read by one scan of the postings index with the candidates' ids as an array key: the scan
# walks the term's postings in id order and steps from one candidate's to the next, so its
# work follows the candidates instead of the term's postings. Reading every posting of the
# late terms and joining them to the candidates, the first form, was 1.7× slower at p50 in a
# bank of 1,000,000, and looking each candidate up by its own index descent slower still
# (docs/decisions/2026-12-05-bounded-keyword-arm.md,
# docs/decisions/2026-12-06-late-terms-looked-up-by-candidate.md). A memory's postings all
# carry its one fact type, so its id alone finds them. The late shares are added after the
# opening ones, so a score can differ from the exact form's in its last bits; one query
# never mixes the two forms.
def _bounded(found: str) -> str:
    return f"""{_TERMS}, found AS MATERIALIZED ({found}
), late AS (
    SELECT mt.unit_id AS id, sum({_SHARE}) AS score
    FROM q
    JOIN memory_terms mt ON mt.bank_id = %(bank)s AND mt.term = q.term
    CROSS JOIN stats
    WHERE NOT q.opens AND mt.unit_id = ANY(ARRAY(SELECT id FROM found))
    GROUP BY mt.unit_id
), scored AS MATERIALIZED (
    SELECT f.id, f.fact_type, f.score + coalesce(late.score, 0) AS score
    FROM found f LEFT JOIN late ON late.id = f.id
){_BEST_OF_EACH_TYPE}
"""


_BM25_BOUNDED = _bounded(_FOUND)
_BM25_CANDIDATES_BOUNDED = _bounded(_FOUND + _BEST_CANDIDATES)

_NATIVE = """
WITH q AS (
    SELECT array_to_string(
               array(SELECT quote_literal(t) FROM unnest(%(terms)s::text[]) AS t), ' | '
           )::tsquery AS query
)
SELECT h.id, h.score
FROM q, unnest(%(types)s::text[]) AS t(fact_type)
CROSS JOIN LATERAL (
    SELECT m.id, ts_rank_cd(m.search_vector, q.query) AS score
    FROM memory_units m
    WHERE m.bank_id = %(bank)s AND m.fact_type = t.fact_type
      AND m.search_vector @@ q.query AND {scope}
    ORDER BY score DESC, m.id
    LIMIT %(limit)s
) h
"""


def rarest_terms(query: KeywordQuery) -> Plan[list[tuple[str, int]]]:
    rows = yield Statement(
        _RAREST_TERMS,
        {
            "bank": query.bank_id,
            "query": query.text,
            "language": query.language,
            "max_terms": MAX_QUERY_TERMS,
        },
    )
    return [(str(r[0]), int(r[1])) for r in rows]


def opening_terms(postings: Sequence[int], exact_postings: int) -> int:
    """How many of a query's terms, rarest first with these posting counts, are read in full:
    all of them while their postings fit ``exact_postings``, otherwise the longest prefix
    that fits, and at least the rarest term."""
    opening, read = 0, 0
    for count in postings:
        if opening and read + count > exact_postings:
            break
        opening, read = opening + 1, read + count
    return opening


def _ranked_by_terms(
    query: KeywordQuery,
    template: Callable[[list[tuple[str, int]]], tuple[str, dict[str, object]]],
) -> Plan[list[tuple[str, float]]]:
    """Shared by the backends: pick the rarest query terms, then run the statement and
    parameters that ``template`` makes of them (rarest first, with their posting counts)."""
    ranked = yield from rarest_terms(query)
    if not ranked:
        return []
    text, extra = template(ranked)
    scope, scope_params = scope_condition("m", query.scope)
    # Postings carry fact type and length; only a filter needs the memories themselves.
    scope_join: sql.Composable = sql.SQL("")
    if query.scope.filters_rows:
        scope_join = sql.SQL(
            "JOIN memory_units m ON m.bank_id = mt.bank_id AND m.id = mt.unit_id AND {}"
        ).format(scope)
    statement = sql.SQL(text).format(scope=scope, scope_join=scope_join)
    params = {
        "bank": query.bank_id,
        "terms": [term for term, _ in ranked],
        "types": list(query.types),
        "limit": query.limit,
        **scope_params,
        **extra,
    }
    rows = yield Statement(statement, params)
    return [(str(r[0]), float(r[1])) for r in rows]


@dataclass(frozen=True)
class Bm25Backend:
    k1: float = 1.2
    b: float = 0.75
    exact_postings: int = 20_000
    name: str = "bm25"

    def opening(self, postings: Sequence[int]) -> int:
        """How many of the terms with these posting counts (rarest first) are read in full."""
        return opening_terms(postings, self.exact_postings)

    def statement(self, ranked: list[tuple[str, int]]) -> tuple[str, dict[str, object]]:
        """The exact or the bounded statement for these terms, and their parameters."""
        terms = [term for term, _ in ranked]
        postings = [df for _, df in ranked]
        opening = self.opening(postings)
        if opening == len(terms):
            text = _BM25
        elif sum(postings[:opening]) > self.exact_postings:
            text = _BM25_CANDIDATES_BOUNDED
        else:
            text = _BM25_BOUNDED
        return text, {
            "k1": self.k1,
            "b": self.b,
            "opening": terms[:opening],
            "candidates": self.exact_postings,
        }

    def plan(self, query: KeywordQuery) -> Plan[list[tuple[str, float]]]:
        return (yield from _ranked_by_terms(query, self.statement))


@dataclass(frozen=True)
class NativeBackend:
    name: str = "native"

    def plan(self, query: KeywordQuery) -> Plan[list[tuple[str, float]]]:
        return (yield from _ranked_by_terms(query, lambda _: (_NATIVE, {})))


def keyword_backend(
    name: KeywordBackendName, k1: float, b: float, exact_postings: int
) -> KeywordBackend:
    if name == "native":
        return NativeBackend()
    return Bm25Backend(k1=k1, b=b, exact_postings=exact_postings)
