"""The metadata filter against a Python oracle of its grammar, on the real database.

The oracle below is written from the grammar's documentation, not from the SQL: random
metadata is stored once, random filters are compiled by
:func:`hindsight_tools.recall.arms.filters.scope_condition`, and the rows PostgreSQL
returns must be exactly those the oracle accepts.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg import sql

from hindsight_tools import InvalidRequestError, MemoryEngine
from hindsight_tools.query.metadata_filter import parse_filter
from hindsight_tools.recall.arms.filters import Scope, scope_condition

MISSING = object()


def resolve(doc: Any, path: list[str]) -> Any:
    for name in path:
        if not isinstance(doc, dict) or name not in doc:
            return MISSING
        doc = doc[name]
    return doc


def json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def oracle_op(x: Any, op: str, v: Any) -> bool:
    if op == "$eq":
        return (x is MISSING or x is None) if v is None else (x is not MISSING and json_equal(x, v))
    if op == "$ne":
        return not oracle_op(x, "$eq", v)
    if op in ("$in", "$nin"):
        held = any(oracle_op(x, "$eq", item) for item in v)
        return held if op == "$in" else not held
    if op == "$exists":
        return (x is not MISSING) is bool(v)
    if op == "$contains":
        return isinstance(x, list) and any(json_equal(item, v) for item in x)
    compare: Callable[[Any, Any], bool] = {
        "$gt": operator.gt,
        "$gte": operator.ge,
        "$lt": operator.lt,
        "$lte": operator.le,
    }[op]
    if isinstance(v, str):
        return isinstance(x, str) and compare(x, v)
    return is_number(x) and compare(x, v)


def oracle(doc: dict[str, Any], flt: dict[str, Any]) -> bool:
    for key, value in flt.items():
        if key == "$and":
            ok = all(oracle(doc, f) for f in value)
        elif key == "$or":
            ok = any(oracle(doc, f) for f in value)
        elif key == "$not":
            ok = not oracle(doc, value)
        else:
            ok = field_matches(resolve(doc, key.split(".")), value)
        if not ok:
            return False
    return True


def field_matches(x: Any, value: Any) -> bool:
    if isinstance(value, dict) and value and all(k.startswith("$") for k in value):
        return all(
            not field_matches(x, operand) if op == "$not" else oracle_op(x, op, operand)
            for op, operand in value.items()
        )
    return oracle_op(x, "$eq", value)


# --- random data ----------------------------------------------------------------------

KEYS = ["a", "b", "team", "0", "we'ird; key", "ünï"]
SCALARS = [0, 1, 2, 2.0, 2.5, -3, 10**12, "", "x", "y", "X", "ä", "10", "2", True, False, None]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return {k: random_value(rng, depth + 1) for k in rng.sample(KEYS, rng.randint(1, 3))}
    if depth < 2 and roll < 0.3:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(SCALARS)


def random_metadata(rng: random.Random) -> dict[str, Any]:
    return {k: random_value(rng) for k in rng.sample(KEYS, rng.randint(0, 4))}


scalars = st.sampled_from(SCALARS)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2)
    ),
    max_leaves=4,
)
paths = st.lists(st.sampled_from(KEYS), min_size=1, max_size=2).map(".".join)
comparable = st.sampled_from([v for v in SCALARS if v is not None and not isinstance(v, bool)])
operators = st.one_of(
    st.tuples(st.sampled_from(["$eq", "$ne", "$contains"]), values),
    st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), comparable),
    st.tuples(st.sampled_from(["$in", "$nin"]), st.lists(values, max_size=3)),
    st.tuples(st.just("$exists"), st.booleans()),
)
field_filters = st.one_of(
    st.builds(lambda p, v: {p: v}, paths, scalars),
    st.builds(lambda p, ops: {p: dict(ops)}, paths, st.lists(operators, min_size=1, max_size=2)),
    st.builds(lambda p, op: {p: {"$not": dict([op])}}, paths, operators),
)
filters = st.recursive(
    field_filters,
    lambda inner: st.one_of(
        st.builds(lambda fs: {"$and": fs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda fs: {"$or": fs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda f: {"$not": f}, inner),
        st.builds(lambda a, b: {**a, **b}, inner, inner),
    ),
    max_leaves=5,
)


@pytest.fixture(scope="module")
def stored(engine: MemoryEngine) -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    rng = random.Random(7)
    docs = {f"m{i}": random_metadata(rng) for i in range(150)}
    docs["nested"] = {"team": {"name": "core", "size": 4}, "a": [1, "x", {"b": 2}]}
    docs["empty"] = {}
    docs["nul"] = {"a": "x\x00y", "b": 1}
    docs["surrogate"] = {"a\x00": 1e23, "b": "\ud800", "team": {"name": "core\ud800"}}
    bank = "metadata-filter-oracle"
    engine.delete_bank(bank)
    engine.retain(bank, [{"id": i, "text": f"memory {i}", "metadata": m} for i, m in docs.items()])
    yield bank, docs
    engine.delete_bank(bank)


def matching_ids(engine: MemoryEngine, bank: str, flt: dict[str, Any]) -> set[str]:
    condition, params = scope_condition("m", Scope(metadata=parse_filter(flt)))
    query = sql.SQL("SELECT m.id FROM memory_units m WHERE m.bank_id = %(bank)s AND {}").format(
        condition
    )
    with psycopg.connect(engine.database_url) as conn:
        return {row[0] for row in conn.execute(query, {"bank": bank, **params})}


@settings(max_examples=300, deadline=None)
@given(flt=filters)
def test_the_database_agrees_with_the_oracle(
    engine: MemoryEngine, stored: tuple[str, dict[str, dict[str, Any]]], flt: dict[str, Any]
) -> None:
    bank, docs = stored
    # the stored twin has U+FFFD for NUL and lone surrogates; the oracle reads what the
    # database can compare
    readable = {i: _readable(d) for i, d in docs.items()}
    expected = {i for i, doc in readable.items() if oracle(doc, flt)}
    assert matching_ids(engine, bank, flt) == expected, flt


def _readable(value: Any) -> Any:
    if isinstance(value, str):
        return "".join("\ufffd" if c == "\x00" or "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, dict):
        return {_readable(k): _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"team.name": "core"}, {"nested"}),
        ({"team.size": {"$gte": 4, "$lt": 5}}, {"nested"}),
        ({"a": {"$contains": {"b": 2}}}, {"nested"}),
        ({"a": {"$contains": "x"}, "team.name": {"$in": ["core", "edge"]}}, {"nested"}),
        ({"$or": [{"team.name": "core"}, {"b": 1, "a": "x\ufffdy"}]}, {"nested", "nul"}),
        ({"b": "\ufffd", "team.name": {"$gt": "core"}}, {"surrogate"}),
    ],
)
def test_hand_written_filters(
    engine: MemoryEngine,
    stored: tuple[str, dict[str, dict[str, Any]]],
    flt: dict[str, Any],
    expected: set[str],
) -> None:
    bank, _ = stored
    assert matching_ids(engine, bank, flt) == expected


def test_missing_fields_follow_mongodb(
    engine: MemoryEngine, stored: tuple[str, dict[str, dict[str, Any]]]
) -> None:
    bank, _ = stored
    # $ne and $nin match a missing field; comparisons never do
    assert "empty" in matching_ids(engine, bank, {"a": {"$ne": 1}})
    assert "empty" in matching_ids(engine, bank, {"a": {"$nin": [1, 2]}})
    assert "empty" not in matching_ids(engine, bank, {"a": {"$lt": 1e300}})
    assert "empty" in matching_ids(engine, bank, {"a": None})
    assert "empty" not in matching_ids(engine, bank, {"a": {"$exists": True}})


@pytest.mark.parametrize(
    ("flt", "where", "words"),
    [
        ({"a": {"$regex": "x"}}, "metadata_filter.a.$regex", "$contains"),
        ({"$nor": []}, "metadata_filter.$nor", "$and, $or, $not"),
        ({"a": {"$gt": [1]}}, "metadata_filter.a.$gt", "a number or a string"),
        ({"a": {"$gt": True}}, "metadata_filter.a.$gt", "a number or a string"),
        ({"a": {"$in": 3}}, "metadata_filter.a.$in", "a list"),
        ({"a": {"$exists": "yes"}}, "metadata_filter.a.$exists", "true or false"),
        ({"$and": []}, "metadata_filter.$and", "non-empty list"),
        ({"$or": {"a": 1}}, "metadata_filter.$or", "non-empty list"),
        ({"a..b": 1}, "metadata_filter.a..b", "no empty names"),
        ({"a": {"$eq": 1, "b": 2}}, "metadata_filter.a", "mixes operators"),
        ({"a": "x\x00"}, "metadata_filter.a", "NUL"),
        ({"a\x00": 1}, "metadata_filter.a\x00", "NUL"),
        ({"a": float("nan")}, "metadata_filter.a", "finite"),
        ({"a": {"$in": list(range(1001))}}, "metadata_filter.a.$in", "at most 1000"),
        ({"a": "x" * 10_001}, "metadata_filter.a", "at most 10000"),
        ({"a": {"$eq": object()}}, "metadata_filter.a.$eq", "values are JSON"),
        ([1, 2], "metadata_filter", "an object"),
    ],
)
def test_malformed_filters_name_the_path_and_what_is_allowed(
    flt: Any, where: str, words: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        parse_filter(flt)
    (problem,) = caught.value.problems
    assert problem.location == where
    assert words in problem.message


def test_deep_and_wide_filters_are_refused_not_crashed() -> None:
    deep: dict[str, Any] = {"a": 1}
    for _ in range(50):
        deep = {"$not": deep}
    with pytest.raises(InvalidRequestError, match="deeper"):
        parse_filter(deep)
    with pytest.raises(InvalidRequestError, match="more than 100 conditions"):
        parse_filter({"$and": [{f"k{i}": i} for i in range(101)]})


@pytest.mark.parametrize(
    "flt",
    [
        {"'; DROP TABLE memory_units; --": 1},
        {"a": "'; DROP TABLE memory_units; --"},
        {"a.$[*] ? (@ > 1)": 1},
        {"a": {"$gt": "{}}"}},
        {"{a,b}": {"$contains": "%(bank)s"}},
        {"a": {"$in": ["%s", "%(scope_m0)s", "\\u0000"]}},
    ],
)
def test_hostile_keys_and_values_are_only_data(
    engine: MemoryEngine, stored: tuple[str, dict[str, dict[str, Any]]], flt: dict[str, Any]
) -> None:
    bank, docs = stored
    assert matching_ids(engine, bank, flt) == {i for i, d in docs.items() if oracle(d, flt)}
