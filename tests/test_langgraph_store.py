"""HindsightStore against LangGraph's reference InMemoryStore, operation by operation, sync
and async; then what the reference can't check (ranking, isolation, the stored text)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.hindsight_tools import HindsightStore
from langgraph.store.memory import InMemoryStore

from hindsight_tools import MemoryEngine


class Runner:
    """Calls a store's methods synchronously or through their async twins."""

    def __init__(self, store: BaseStore, mode: str) -> None:
        self.store, self.mode = store, mode

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if self.mode == "sync":
            return getattr(self.store, name)  # type: ignore[no-any-return]
        method = getattr(self.store, "a" + name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return asyncio.run(method(*args, **kwargs))

        return call


@pytest.fixture(params=["sync", "async"])
def stores(
    request: pytest.FixtureRequest, engine: MemoryEngine, bank: str
) -> Iterator[tuple[Runner, Runner]]:
    ours = HindsightStore(engine=engine, bank_id=bank)
    yield Runner(ours, request.param), Runner(InMemoryStore(), request.param)


def _view(item: Item | None) -> tuple[tuple[str, ...], str, str] | None:
    if item is None:
        return None
    return (tuple(item.namespace), item.key, json.dumps(item.value, sort_keys=True))


def _views(items: list[Any]) -> list[Any]:
    return sorted(_view(i) for i in items)


def _both(ours: Runner, ref: Runner, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return getattr(ours, name)(*args, **kwargs), getattr(ref, name)(*args, **kwargs)


VALUES: list[dict[str, Any]] = [
    {"text": "plain"},
    {"nested": {"deep": {"deeper": [1, 2.5, None, {"x": "ü"}]}}, "none": None},
    {"unicode": "日本語 🎉 Ünïcödé", "empty": "", "list": [], "obj": {}},
    {"big": 2**62, "neg": -1.5e-300, "flag": False, "zero": 0},
    {"quote": 'it\'s "quoted" \\ back', "sql": "'); DROP TABLE memory_units; --"},
    {"nul": "a\x00b", "path": "$.value[0]", "like": "%_\\"},
    {},
]


def test_put_get_update_delete_agree_with_the_reference(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    for n, value in enumerate(VALUES):
        _both(ours, ref, "put", ("docs", f"user{n % 2}"), f"key{n}", value)
    for n, value in enumerate(VALUES):
        mine, theirs = _both(ours, ref, "get", ("docs", f"user{n % 2}"), f"key{n}")
        assert _view(mine) == _view(theirs)
        assert mine.value == value  # exactly, None, unicode, NUL and nesting included
    _both(ours, ref, "put", ("docs", "user0"), "key0", {"text": "replaced"})
    mine, theirs = _both(ours, ref, "get", ("docs", "user0"), "key0")
    assert mine.value == theirs.value == {"text": "replaced"}
    assert mine.created_at < mine.updated_at  # an update keeps when the item was made
    _both(ours, ref, "delete", ("docs", "user0"), "key0")
    assert _both(ours, ref, "get", ("docs", "user0"), "key0") == (None, None)
    # deleted means gone from search and, with its namespace's last item, from the listing
    assert "key0" not in [i.key for i in ours.search(("docs",), limit=100)]
    for n in range(2, len(VALUES), 2):
        _both(ours, ref, "delete", ("docs", "user0"), f"key{n}")
    # (the reference keeps listing a namespace whose last item went; PostgresStore doesn't)
    assert ours.list_namespaces() == [("docs", "user1")]
    assert _both(ours, ref, "get", ("nowhere",), "key1") == (None, None)
    _both(ours, ref, "delete", ("nowhere",), "nothing")  # deleting nothing is no error


HOSTILE = ["", " ", "a/b", "%", "_", "\\", "'", '"; --', "[0]", "$", "ü", "\x00", "*", "a" * 300]


def test_hostile_keys_and_labels_address_exactly_one_item(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    labels = ["a", "a_b", "a%", "ab", "a b", "A", "*", "ü", "a\\"]
    for label in labels:
        for key in HOSTILE:
            _both(ours, ref, "put", (label,), key, {"label": label, "key": key})
    for label in labels:
        for key in HOSTILE:
            mine, theirs = _both(ours, ref, "get", (label,), key)
            assert _view(mine) == _view(theirs) and mine is not None
    for label in labels:
        mine, theirs = _both(ours, ref, "search", (label,), limit=100)
        assert _views(mine) == _views(theirs) and len(mine) == len(HOSTILE)
    mine, theirs = _both(ours, ref, "list_namespaces", limit=100)
    assert mine == theirs


NAMESPACES = [
    ("a",),
    ("a", "b"),
    ("a", "b", "c"),
    ("a", "c"),
    ("ab",),
    ("a_b",),
    ("a%",),
    ("b", "a"),
    ("b", "x", "a"),
    ("c", "b", "c"),
    ("users", "alice", "memories"),
    ("users", "bob", "memories"),
    ("users", "bob", "profile"),
]


def _fill_namespaces(ours: Runner, ref: Runner) -> None:
    for n, namespace in enumerate(NAMESPACES):
        for k in range(2):
            _both(ours, ref, "put", namespace, f"k{k}", {"n": n, "k": k})


def test_prefix_search_takes_whole_labels(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    _fill_namespaces(ours, ref)
    prefixes = [(), ("a",), ("a", "b"), ("ab",), ("a_b",), ("a%",), ("users",), ("zzz",)]
    for prefix in prefixes:
        mine, theirs = _both(ours, ref, "search", prefix, limit=1000)
        assert _views(mine) == _views(theirs), prefix
    # ("a",) must not reach ("ab",), ("a_b",) or ("a%",)
    assert {i.namespace[0] for i in ours.search(("a",), limit=1000)} == {"a"}


def test_list_namespaces_agrees_with_the_reference(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    _fill_namespaces(ours, ref)
    cases: list[dict[str, Any]] = [
        {},
        {"prefix": ("a",)},
        {"prefix": ("a", "b")},
        {"prefix": ("a%",)},
        {"prefix": ("a_b",)},
        {"suffix": ("a",)},
        {"suffix": ("memories",)},
        {"prefix": ("users", "*", "memories")},
        {"prefix": ("*", "b")},
        {"suffix": ("*", "c")},
        {"prefix": ("users",), "suffix": ("profile",)},
        {"max_depth": 1},
        {"max_depth": 2, "prefix": ("a",)},
        {"max_depth": 2, "suffix": ("c",)},
        {"limit": 3},
        {"limit": 3, "offset": 3},
        {"limit": 5, "offset": 100},
        {"prefix": ("nothing",)},
    ]
    for case in cases:
        mine, theirs = _both(ours, ref, "list_namespaces", **case)
        assert mine == theirs, case
    paged = [ns for o in range(0, 20, 4) for ns in ours.list_namespaces(limit=4, offset=o)]
    assert paged == ref.list_namespaces(limit=100)


def _random_values(rng: random.Random, count: int) -> list[dict[str, Any]]:
    colors = ["red", "green", "blue"]
    values = []
    for i in range(count):
        value: dict[str, Any] = {
            "n": rng.randint(0, 9),
            "score": rng.choice([0.5, 1.0, 2.25, 7]),
            "color": rng.choice(colors),
            "meta": {"owner": rng.choice(["ann", "ben"]), "level": rng.randint(1, 3)},
            "tags": rng.choice([["x"], ["x", "y"], ["y", "x"], []]),
            "i": i,
        }
        if rng.random() < 0.3:
            value["opt"] = rng.choice([None, "set"])
        if rng.random() < 0.2:
            value["meta"] = "flat"  # a nested filter must not match a string
        values.append(value)
    return values


FILTERS: list[dict[str, Any]] = [
    {"n": 3},
    {"n": {"$eq": 3}},
    {"n": {"$ne": 3}},
    {"n": {"$gt": 4}},
    {"n": {"$gte": 4, "$lt": 7}},
    {"n": {"$lte": 2}},
    {"score": 1},  # 1 equals 1.0, as in Python and JSON
    {"score": {"$gt": 0.75}},
    {"color": "red", "n": {"$lt": 5}},
    {"meta": {"owner": "ann"}},
    {"meta": {"owner": "ben", "level": {"$gte": 2}}},
    {"tags": ["x", "y"]},  # a list equals the same list, in order
    {"opt": None},  # null, or missing
    {"opt": {"$ne": None}},
    {"opt": "set"},
    {"missing": None},
    {"color": "purple"},
]


def test_filtered_search_agrees_with_the_reference(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    rng = random.Random(7)
    for n, value in enumerate(_random_values(rng, 60)):
        namespace = ("items", "even" if n % 2 == 0 else "odd")
        _both(ours, ref, "put", namespace, f"item{n}", value)
    for wanted in FILTERS:
        for prefix in [("items",), ("items", "odd")]:
            mine, theirs = _both(ours, ref, "search", prefix, filter=wanted, limit=1000)
            assert _views(mine) == _views(theirs), (prefix, wanted)
    assert len(ours.search(("items",), filter={"n": {"$gte": 0}}, limit=1000)) == 60


def test_search_pages_newest_first_and_cover_every_item_once(
    stores: tuple[Runner, Runner],
) -> None:
    ours, ref = stores
    for n in range(23):
        _both(ours, ref, "put", ("pages", str(n % 3)), f"k{n}", {"n": n})
    _both(ours, ref, "put", ("pages", "0"), "k0", {"n": 0, "again": True})
    full = ours.search(("pages",), limit=100)
    assert full[0].key == "k0"  # rewritten last
    assert [i.updated_at for i in full] == sorted((i.updated_at for i in full), reverse=True)
    pages = [i for o in range(0, 25, 5) for i in ours.search(("pages",), limit=5, offset=o)]
    assert [_view(i) for i in pages] == [_view(i) for i in full]
    assert _views(full) == _views(ref.search(("pages",), limit=100))
    assert ours.search(("pages",), limit=5, offset=100) == []


def test_batch_reads_before_writes_and_the_last_put_wins(stores: tuple[Runner, Runner]) -> None:
    ours, ref = stores
    _both(ours, ref, "put", ("b",), "x", {"v": "old"})
    ops = [
        PutOp(("b",), "x", {"v": "new"}),
        GetOp(("b",), "x"),
        PutOp(("b",), "y", {"v": 1}),
        SearchOp(("b",), limit=10),
        PutOp(("b",), "y", {"v": 2}),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),), limit=10),
        PutOp(("c",), "z", {"v": 3}),
        PutOp(("c",), "z", None),
        GetOp(("missing",), "x"),
    ]
    mine, theirs = _both(ours, ref, "batch", ops)
    assert len(mine) == len(ops)
    assert _view(mine[1]) == _view(theirs[1]) == (("b",), "x", '{"v": "old"}')
    assert _views(mine[3]) == _views(theirs[3])
    assert mine[5] == theirs[5] == [("b",)]
    assert mine[0] is mine[2] is mine[4] is mine[6] is mine[7] is mine[8] is None
    for key in ("x", "y"):
        a, b = _both(ours, ref, "get", ("b",), key)
        assert _view(a) == _view(b)
    assert _both(ours, ref, "get", ("c",), "z") == (None, None)
    # the reference also lists ("c",) and even ("missing",), which a get touched
    assert ours.list_namespaces() == [("b",)]


BAD_NAMESPACES: list[tuple[Any, ...]] = [
    (),
    ("langgraph", "x"),
    ("a.b",),
    ("",),
    ("a", ""),
    ("a", 1),
    ("a\x00",),
]


@pytest.mark.parametrize("namespace", BAD_NAMESPACES, ids=repr)
def test_namespaces_are_validated_as_langgraph_does(
    namespace: tuple[Any, ...], engine: MemoryEngine, bank: str
) -> None:
    ours = HindsightStore(engine=engine, bank_id=bank)
    ref = InMemoryStore()
    for store in (ours, ref):
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"v": 1})
    # ops handed straight to batch are checked too (the reference checks none there)
    with pytest.raises(InvalidNamespaceError):
        ours.batch([PutOp(namespace, "k", {"v": 1})])
    assert ours.list_namespaces() == []


def test_a_value_the_store_cannot_keep_is_refused_and_nothing_is_written(
    engine: MemoryEngine, bank: str
) -> None:
    store = HindsightStore(engine=engine, bank_id=bank)
    store.put(("ok",), "kept", {"v": 1})
    bad: list[dict[str, Any]] = [{"v": float("nan")}, {"v": object()}, {"big": "x" * 70_000}]
    for value in bad:
        with pytest.raises(ValueError, match=r"cannot store \('ok',\)/'k': value"):
            store.batch([PutOp(("ok",), "first", {"v": 2}), PutOp(("ok",), "k", value)])
    assert [i.key for i in store.search(("ok",))] == ["kept"]
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("ok",), "k", {"v": 1}, ttl=5)
    with pytest.raises(NotImplementedError, match="TTL"):
        store.batch([PutOp(("ok",), "k", {"v": 1}, ttl=5.0)])
    with pytest.raises(ValueError, match="filter key 'a.b'"):
        store.search(("ok",), filter={"a.b": 1})
    with pytest.raises(ValueError, match="only 'fields'"):
        HindsightStore(engine=engine, index={"dims": 384, "fields": ["text"]})
    with pytest.raises(ValueError, match="budget"):
        HindsightStore(engine=engine, budget="max")  # type: ignore[arg-type]


FACTS = {
    "dog": "Alice's dog is a border collie named Rex",
    "job": "Alice works as a nurse at the city hospital",
    "food": "Alice is allergic to peanuts",
    "home": "Alice moved to Lisbon in 2022",
    "hobby": "Alice plays the cello in an amateur orchestra",
}


def test_semantic_search_ranks_the_relevant_item_first_within_its_namespace(
    engine: MemoryEngine, bank: str
) -> None:
    store = HindsightStore(engine=engine, bank_id=bank)
    for key, text in FACTS.items():
        store.put(("users", "alice"), key, {"text": text})
        # the same facts under another user: never returned for alice
        store.put(("users", "alicia"), key, {"text": text})
    store.put(("users", "alice"), "secret", {"text": "the dog's vet bill"}, index=False)
    cases = {
        "What is the name of Alice's pet?": "dog",
        "Where does Alice work?": "job",
        "Which food must Alice avoid?": "food",
        "Which city does Alice live in?": "home",
        "What instrument does Alice play?": "hobby",
    }
    for query, expected in cases.items():
        found = store.search(("users", "alice"), query=query, limit=10)
        assert found[0].key == expected, query
        assert found[0].score is not None and found[0].score > 0
        assert {i.namespace for i in found} == {("users", "alice")}
        # every item of the namespace comes back: ranked first, the unindexed one unscored
        assert sorted(i.key for i in found) == sorted([*FACTS, "secret"])
        assert found[-1].key == "secret" and found[-1].score is None
    async_found = asyncio.run(store.asearch(("users",), query="Alice's allergy", limit=2))
    assert [i.key for i in async_found] == ["food", "food"]
    assert store.search(("users", "alice"), query="pet", filter={"text": FACTS["job"]})[0].key == (
        "job"
    )


def test_the_indexed_fields_are_the_text_a_memory_is_found_by(
    engine: MemoryEngine, bank: str
) -> None:
    store = HindsightStore(engine=engine, bank_id=bank, index={"fields": ["title", "tags[*]"]})
    value = {"title": "Trip to Kyoto", "tags": ["travel", "japan"], "body": "never indexed"}
    store.put(("notes",), "kyoto", value)
    store.put(("notes",), "body", value, index=["body"])
    store.put(("notes",), "nothing", value, index=False)
    texts = {m.metadata["key"]: m.text for m in engine.list_memories(bank)}
    assert texts["kyoto"] == "Trip to Kyoto\ntravel\njapan"
    assert texts["body"] == "never indexed"
    whole = HindsightStore(engine=engine, bank_id=bank)
    whole.put(("notes",), "whole", {"a": "first", "b": {"c": 2, "d": [True, None, "x"]}})
    assert engine.list_memories(bank, metadata_filter={"key": "whole"})[0].text == (
        "first\n2\ntrue\nx"
    )
    # other memories of the bank are not items
    engine.retain(bank, [{"text": "a plain memory, not an item"}])
    assert len(store.search((), limit=100)) == 4
    assert store.list_namespaces() == [("notes",)]
    assert {i.key for i in store.search((), query="a plain memory", limit=100)} == {
        "kyoto",
        "body",
        "nothing",
        "whole",
    }


def test_an_async_engine_serves_only_the_async_methods(engine: MemoryEngine, bank: str) -> None:
    store = HindsightStore(engine=engine.aio, bank_id=bank)

    async def scenario() -> Item | None:
        await store.aput(("x",), "k", {"v": 1})
        return await store.aget(("x",), "k")

    item = asyncio.run(scenario())
    assert item is not None and item.value == {"v": 1}
    with pytest.raises(TypeError, match="abatch"):
        store.get(("x",), "k")
    with pytest.raises(TypeError, match="MemoryEngine"):
        HindsightStore(engine="postgresql://")  # type: ignore[arg-type]
