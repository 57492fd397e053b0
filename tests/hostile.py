"""Hypothesis strategies for hostile input, and the checks every hostile call must pass.

Text is built from fragments so that one string can hold SQL and ``tsquery`` syntax next to
NUL bytes, unpaired surrogates, emoji, CJK and combining marks; a separate branch makes
strings of up to a few megabytes cheaply (a short piece repeated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from hypothesis import strategies as st
from psycopg import sql

from hindsight_tools import InvalidRequestError
from tests.conftest import BANK_TABLES

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]

# Injection payloads and the metacharacters of SQL, LIKE, tsquery, JSON and format strings.
PAYLOADS = (
    "'; DROP TABLE memory_units; --",
    "' OR '1'='1",
    '" OR 1=1 --',
    "1); DELETE FROM banks; --",
    "'); SELECT pg_sleep(5); --",
    "$$; SELECT 1; $$",
    "; COMMIT; BEGIN;",
    "/* */ --",
    "E'\\x00'",
    "U&'\\0000'",
    "\\",
    "\\'",
    "''''",
    "%s %(bank)s %% {tags} {} {0}",
    "a & b | !c <-> (d:*)",
    "foo:*AB & !!bar <2> baz",
    "':* | '",
    "((((",
    "))))",
    "to_tsquery('x')::text",
    "ARRAY['a']::text[]",
    '{"a": "\\u0000"}',
    "\\u0000",
    "http://example.com/a\\b'c?d=1&e=2",
    "C:\\Windows\\System32\\",
    "_%*?[]^$.|+",
    "\u202eevil\u202c",
    "\ufeff\u200b\u200d",
    "👨‍👩‍👧‍👦🏳️‍🌈",
    "日本語のテキストと中文测试",
    "한국어 텍스트",
    "مرحبا بالعالم",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇",
    "ῷ" * 40,
    "\r\n\t\x0b\x0c\x1c\x85\u2028",
)
# Not storable in PostgreSQL text: NUL, and surrogates with no UTF-8 form.
UNSTORABLE = ("\x00", "\ud800", "\udfff", "a\udc80b")

fragment = st.one_of(
    st.text(st.characters(exclude_categories=[]), max_size=12),
    st.sampled_from(PAYLOADS),
    st.sampled_from(UNSTORABLE),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=8),
    st.text(st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF), min_size=1, max_size=8),
    st.text(st.sampled_from(list("'\"\\;:&|!()<>*%_-$ {}[]")), min_size=1, max_size=8),
)
megabyte = st.builds(
    lambda piece, times: piece * times,
    st.one_of(st.sampled_from(("a", "字", "😀", "a b ", "'", "Ab ")), st.sampled_from(PAYLOADS)),
    st.integers(min_value=20_000, max_value=1_100_000),
)
nasty_text = st.one_of(st.lists(fragment, min_size=1, max_size=6).map("".join), megabyte)
# Mostly sensible words with some nastiness mixed in: accepted calls must also be exercised.
plain_text = st.lists(
    st.sampled_from(("Alice", "met", "Bob", "in", "Paris", "2023", "Müller", "東京", "🙂")),
    min_size=1,
    max_size=8,
).map(" ".join)
some_text = st.one_of(plain_text, nasty_text)

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinity included: they must be refused
    some_text,
)
metadata = st.dictionaries(
    some_text,
    st.recursive(
        json_scalar,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(some_text, inner, max_size=3),
        max_leaves=12,
    ),
    max_size=4,
)
dates = st.one_of(
    st.none(),
    st.datetimes(timezones=st.none() | st.timezones()),
    st.sampled_from(
        ("2023-06-05", "yesterday", "0001-01-01T00:00:00+05:00", "9999-12-31T23:00-05:00")
    ),
)


def totals(db: Conn) -> tuple[int, ...]:
    """Row counts of every table the engine writes, across all banks."""
    tables = (*BANK_TABLES, "memory_terms", "bank_terms")
    counts = sql.SQL(", ").join(
        sql.SQL("(SELECT count(*) FROM {})").format(sql.Identifier(t)) for t in tables
    )
    row = db.execute(sql.SQL("SELECT ") + counts).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def result_or_rejection(call: Callable[[], T]) -> T | InvalidRequestError:
    """The call's value or its validation error; any other exception fails the test."""
    try:
        return call()
    except InvalidRequestError as exc:
        assert exc.problems, "a rejection names at least one problem"
        assert all(p.location and p.message for p in exc.problems), exc.problems
        return exc
