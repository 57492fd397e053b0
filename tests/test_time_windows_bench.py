"""The time-window regression read on the scripted persona: every text read, moves found."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from benchmarks.families import last_question_time
from benchmarks.time_questions import time_questions
from benchmarks.time_windows import main, moved, window_rows
from hindsight_tools.evaluation import load_dataset

PERSONA = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "persona"
KINDS = ("memory", "question", "time-scoped")


def _conversation(folder: Path) -> Path:
    """A LoCoMo-format conversation: twelve turns in each of May and June 2023 (a period
    needs ten to be asked about), one question."""
    folder.mkdir()
    turns = [
        {"bank": "c", "id": f"c:D{n}", "dia_id": f"D{n}", "speaker": "Ana", "text": f"Ana: day {n}"}
        | {"occurred_at": f"2023-0{5 + n // 12}-{3 + n % 12 * 2:02d}T10:00:00"}
        for n in range(24)
    ]
    question: dict[str, object] = {"bank": "c", "qid": "q", "category": 1, "evidence": ["D0"]}
    question |= {"question": "What did Ana do in May 2023?", "query_time": "2023-09-01T00:00:00"}
    (folder / "memories.jsonl").write_text("\n".join(json.dumps(t) for t in turns))
    (folder / "queries.jsonl").write_text(json.dumps(question))
    return folder


def test_every_dated_text_is_read_with_its_window(tmp_path: Path) -> None:
    folder = _conversation(tmp_path / "conversation")
    rows = window_rows([folder])
    bank = load_dataset(folder).banks[0]
    asked = time_questions(bank, last_question_time(bank))
    kinds = {kind: [r for r in rows if r["kind"] == kind] for kind in KINDS}
    assert [len(kinds[kind]) for kind in KINDS] == [24, 1, len(asked)]
    assert asked and [r["text"] for r in kinds["time-scoped"]] == [q.question for q in asked]
    may = kinds["question"][0]
    assert may["at"] == "2023-09-01T00:00:00+00:00"
    assert may["window"] == ["2023-05-01T00:00:00+00:00", "2023-05-31T23:59:59.999999+00:00", False]
    assert kinds["memory"][0]["window"] is None  # "day 0" names no time


def test_only_the_windows_that_differ_are_moves() -> None:
    rows = window_rows([PERSONA])
    assert moved(rows, rows) == []
    later = copy.deepcopy(rows)
    later[3]["window"] = None if rows[3]["window"] else ["2020-01-01", "2020-12-31", False]
    assert moved(rows, later) == [(rows[3], later[3])]
    with pytest.raises(ValueError, match="different texts"):
        moved(rows, rows[1:])


def test_a_run_compared_with_itself_moves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert main([str(PERSONA), "--out", str(first)]) == 0
    count = len(json.loads(first.read_text()))
    assert main([str(PERSONA), "--out", str(second), "--compare", str(first)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"0 of {count} windows moved"
