"""The ``hindsight-tools`` command, run as a user would, against the session's server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hindsight_tools import InvalidRequestError, MemoryEngine, Settings
from hindsight_tools.cli.commands import _exit_on_sigterm, _parser, eval_settings
from hindsight_tools.jsonl import item_from_record
from tests.conftest import count

# invented, LoCoMo-shaped: two conversations of two sessions each (see its README)
MINI_LOCOMO = Path(__file__).resolve().parent / "data" / "mini-locomo"


def cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HINDSIGHT_API_DATA_DIR": str(settings.data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "hindsight_tools.cli.commands", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_locomo_records_map_onto_items() -> None:
    record = {
        "bank": "conv-26",
        "id": "conv-26:D1:3",
        "dia_id": "D1:3",
        "document_id": "conv-26:session_1",
        "session": 1,
        "occurred_at": "2023-05-08T13:56:00",
        "speaker": "Caroline",
        "text": "Caroline: I went to a LGBTQ support group yesterday.",
    }
    assert item_from_record(record) == {
        "id": "conv-26:D1:3",
        "document_id": "conv-26:session_1",
        "text": "Caroline: I went to a LGBTQ support group yesterday.",
        "occurred_start": "2023-05-08T13:56:00",
        "metadata": {"dia_id": "D1:3", "session": 1, "speaker": "Caroline"},
    }


def test_retain_and_recall_from_the_command_line(
    settings: Settings, engine: MemoryEngine, bank: str, tmp_path: Path
) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        '{"text": "Olga repairs vintage typewriters"}\n\n{"text": "Pedro grows tomatoes"}\n'
    )
    done = cli(settings, "retain", "--bank", bank, str(plain))
    assert done.returncode == 0, done.stderr
    assert "retained 2 memories" in done.stdout

    out = cli(settings, "recall", "--bank", bank, "Who fixes old typewriters?", "--json")
    assert out.returncode == 0, out.stderr
    memories = json.loads(out.stdout)["memories"]
    assert memories[0]["text"] == "Olga repairs vintage typewriters"

    text = cli(settings, "recall", "--bank", bank, "tomatoes")
    assert text.stdout.splitlines()[0].endswith("Pedro grows tomatoes")


def test_retain_locomo_with_documents(
    settings: Settings, engine: MemoryEngine, tmp_path: Path
) -> None:
    lines = [
        line
        for line in (MINI_LOCOMO / "memories.jsonl").read_text().splitlines()
        if '"mini-a:session_1"' in line
    ]
    assert len(lines) == 6
    sample = tmp_path / "sample.jsonl"
    sample.write_text("\n".join(lines) + "\n")
    documents = str(MINI_LOCOMO / "documents.jsonl")
    try:
        done = cli(settings, "retain", str(sample), "--documents", documents)
        assert done.returncode == 0, done.stderr
        assert "retained 6 memories into 1 bank(s)" in done.stdout
        result = engine.recall("mini-a", "lease on Harbour Street", include_chunks=True)
        top = result.memories[0]
        assert top.id == "mini-a:D1:1" and top.metadata["dia_id"] == "D1:1"
        assert top.metadata["speaker"] == "Rosa"
        assert top.occurred_start is not None and top.occurred_start.year == 2023
        assert len(result.chunks) == 1 and result.chunks[0].text.startswith("Rosa: Hi Idris!")
    finally:
        engine.delete_bank("mini-a")


def test_eval_scores_a_locomo_folder(
    settings: Settings, engine: MemoryEngine, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    try:
        done = cli(settings, "eval", str(MINI_LOCOMO), "--rerank-depth", "2", "--json", str(out))
    finally:
        for bank in ("mini-a", "mini-b"):
            engine.delete_bank(f"eval-{bank}")
    assert done.returncode == 0, done.stderr
    assert "(depth 2, keep 8)" in done.stdout
    report = json.loads(out.read_text())
    assert len(report["questions"]) == 10
    # one question has no evidence; one is adversarial, left out of the headline figure
    assert (report["overall"]["questions"], report["overall"]["skipped"]) == (9, 1)
    assert report["overall_no_adversarial"]["questions"] == 8
    by_qid = {q["qid"]: q for q in report["questions"]}
    # "What did Rosa bake first?": the answer's turn, though the question's wording is nearer
    # the turn before it ("What are you going to bake first?")
    assert "D1:3" in by_qid["mini-a_q0"]["ranked"][:5]


def test_bad_input_exits_2_with_the_reason(settings: Settings, bank: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": "x", "fact_type": "rumour"}\n')
    done = cli(settings, "retain", "--bank", bank, str(bad))
    assert done.returncode == 2
    assert "items[1].fact_type" in done.stderr and "'world'" in done.stderr
    no_bank = cli(settings, "retain", str(bad))
    assert no_bank.returncode == 2 and "no --bank" in no_bank.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("{not json\n")
    broken = cli(settings, "retain", "--bank", bank, str(garbage))
    assert broken.returncode == 2 and "garbage.jsonl:1" in broken.stderr


def test_retain_takes_only_a_batch_size_of_at_least_one(
    settings: Settings, bank: str, tmp_path: Path, db: psycopg.Connection[tuple[Any, ...]]
) -> None:
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        '{"text": "Olga repairs vintage typewriters"}\n{"text": "Pedro grows tomatoes"}\n'
    )
    for size in ("0", "-4", "two"):
        done = cli(settings, "retain", "--bank", bank, "--batch-size", size, str(plain))
        assert done.returncode == 2
        assert "argument --batch-size: must be an integer >= 1" in done.stderr
        assert "retained" not in done.stdout
    assert count(db, "memory_units", bank) == 0

    done = cli(settings, "retain", "--bank", bank, "--batch-size", "1", str(plain))
    assert done.returncode == 0, done.stderr
    assert "retained 2 memories into 1 bank(s)" in done.stdout
    assert count(db, "memory_units", bank) == 2


def test_eval_rejects_a_negative_rerank_depth_and_limit(settings: Settings) -> None:
    for flag, value, allowed in (("--rerank-depth", "-3", ">= 0"), ("--limit", "0", ">= 1")):
        done = cli(settings, "eval", str(MINI_LOCOMO), flag, value)
        assert done.returncode == 2
        assert f"argument {flag}: must be an integer {allowed}, got {value}" in done.stderr


def test_eval_overrides_are_validated_like_the_environment() -> None:
    args = _parser().parse_args(["eval", str(MINI_LOCOMO), "--rerank-depth", "0"])
    assert eval_settings(args).reranker_depth_mid == 0  # 0 is allowed: fused order only
    args.rerank_depth = -3  # past argparse, the settings still refuse it
    with pytest.raises(InvalidRequestError) as rejected:
        eval_settings(args)
    assert [str(p) for p in rejected.value.problems] == [
        f"reranker_depth_{budget}: Input should be greater than or equal to 0"
        for budget in ("low", "mid", "high")
    ]
    with pytest.raises(InvalidRequestError, match="reranker_depth_lo: unknown setting"):
        Settings().with_overrides({"reranker_depth_lo": 2})


def test_demo_runs_the_four_kinds_of_recall(settings: Settings) -> None:
    done = cli(settings, "demo", "--bank", "demo-test")
    assert done.returncode == 0, done.stderr
    for kind in ("[names]", "[paraphrase]", "[time]", "[relations]"):
        assert kind in done.stdout
    assert "retained" in done.stdout


def test_recall_explain_shows_every_arms_rank_and_the_rerank(
    settings: Settings, engine: MemoryEngine, bank: str
) -> None:
    engine.retain(
        bank,
        [
            {
                "id": "hike",
                "text": "Went hiking in the Alps with Sam",
                "occurred_start": "2023-06-10",
            },
            {"id": "cook", "text": "Cooked risotto for dinner", "occurred_start": "2023-06-11"},
        ],
    )
    done = cli(settings, "recall", "--bank", bank, "--explain", "hiking in the Alps in June 2023")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Went hiking in the Alps with Sam" in lines[0]
    explained = lines[1].split()
    assert explained[0] == "rrf" and float(explained[1]) > 0
    assert "cross-encoder" in lines[1]
    # late interaction (on by default) scored it, in (0, 1]: a mean of cosines
    assert explained[2] == "maxsim" and 0 < float(explained[3]) <= 1
    # the hike is the keyword arm's and the temporal arm's #1
    assert "bm25#1" in explained and "temporal#1" in explained
    assert any(word.startswith("graph#") for word in explained)


def test_sigterm_unwinds_the_command_instead_of_killing_it() -> None:
    before = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _exit_on_sigterm()
        with pytest.raises(SystemExit) as stopped:  # `with` blocks and finally clauses run
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs at the next bytecode; never reached
        assert stopped.value.code == 128 + signal.SIGTERM

        def mine(signum: int, frame: object) -> None: ...

        signal.signal(signal.SIGTERM, mine)
        _exit_on_sigterm()
        assert signal.getsignal(signal.SIGTERM) is mine  # someone else's handler stays
    finally:
        signal.signal(signal.SIGTERM, before)


def test_memories_get_list_and_delete_from_the_command_line(
    settings: Settings, engine: MemoryEngine, bank: str
) -> None:
    engine.retain(
        bank,
        [
            {
                "id": "a",
                "text": "Olga repairs typewriters",
                "occurred_start": "2024-05-01",
                "metadata": {"team": "core"},
                "document_id": "notes",
                "chunk": "Olga's shop.",
            },
            {
                "id": "b",
                "text": "Pedro grows tomatoes",
                "occurred_start": "2024-07-01",
                "metadata": {"team": "edge"},
            },
        ],
    )
    listed = cli(settings, "memories", "list", "--bank", bank)
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["a", "b"]
    core = cli(
        settings,
        "memories",
        "list",
        "--bank",
        bank,
        "--metadata-filter",
        '{"team": "core"}',
        "--json",
    )
    assert [json.loads(line)["id"] for line in core.stdout.splitlines()] == ["a"]
    engine.retain(bank, [{"id": "c", "text": "Ana paints murals", "tags": ["art", "city"]}])
    newest = cli(settings, "memories", "list", "--bank", bank, "--order", "updated_at")
    assert [line.split("\t")[0] for line in newest.stdout.splitlines()] == ["c", "a", "b"]
    tags = cli(settings, "memories", "tags", "--bank", bank, "--prefix", "ar")
    assert tags.stdout.splitlines() == ["1\tart"]
    summer = cli(
        settings,
        "recall",
        "--bank",
        bank,
        "Who grows tomatoes or repairs typewriters?",
        "--after",
        "2024-06-01",
        "--json",
    )
    assert [m["id"] for m in json.loads(summer.stdout)["memories"]] == ["b"]
    got = cli(settings, "memories", "get", "--bank", bank, "b", "--json")
    assert json.loads(got.stdout)["metadata"] == {"team": "edge"}
    gone = cli(settings, "memories", "delete", "--bank", bank, "--document", "notes")
    assert gone.stdout.strip() == "deleted 1 memories of document 'notes'"
    assert cli(settings, "memories", "delete", "--bank", bank, "b", "c", "x").stdout.strip() == (
        "deleted 2 memories"
    )
    assert engine.list_memories(bank) == []
    bad = cli(settings, "memories", "list", "--bank", bank, "--metadata-filter", '{"a": {"$x": 1}}')
    assert bad.returncode == 2 and "metadata_filter.a.$x" in bad.stderr
    page = cli(settings, "memories", "list", "--bank", bank, "--limit", "5000")
    assert page.returncode == 2 and "--limit: must be an integer from 1 to 1000" in page.stderr
