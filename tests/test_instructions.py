"""Standing instructions: recognised by their opening words, placed by the semantic arm.

The placement on hand-made rankings, then on a bank with the real models and database.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from hindsight_tools import MemoryEngine, Settings
from hindsight_tools.cli.format import format_result
from hindsight_tools.recall.fusion import FusedCandidate
from hindsight_tools.recall.instructions import is_standing_instruction, place_instructions
from hindsight_tools.recall.prerank import SCORE_STEP, RankedCandidate
from hindsight_tools.tools.text import memory_line

INSTRUCTIONS = [
    "Always include version numbers when I ask about software dependencies.",
    "user: Always format all code snippets with syntax highlighting.",
    "Never use semicolons in my JavaScript.",
    "From now on, answer in French.",
    "Please always cite your sources.",
    "Ok, from now on keep answers short.",
    "Whenever I ask about recipes, list the vegetarian ones first.",
    "When I ask for code, use TypeScript.",
    "Don't ever suggest Comic Sans.",
    "Don\u2019t ever suggest Comic Sans.",
    "Never ever share my address.",
    "[user]: Always answer in British English.",
    "User (10:32): Never round the totals.",
    "O\u2019Brien: Always copy me on the invoices.",
    "Going forward, write dates as 2024-06-12.",
    "  Caroline: Never share my address with anyone.",
]

NOT_INSTRUCTIONS = [
    "Joanna: Always good to hear! See you later!",
    "Never a dull moment with the kids.",
    "Never mind, I found it.",
    "I always go running on Sundays.",
    "She never told me why she left.",
    "Always been a fan of jazz.",
    "The team should always test before a release, she said.",
    "Alwaysland is a theme park.",
    "Always wanted to visit Japan!",
    "Caroline: Never thought I would say that.",
    "Never knew that!",
    "Melanie: Always loved that song.",
    "Never heard of it",
    "Never!",
    "Caroline: Always!",
    "From now on I will go to the gym.",
    "Going forward, we'll use Postgres.",
    "assistant: Always back up your database before a migration.",
    "Make sure you come to my party!",
    "Remember to bring the tickets.",
    "",
]


@pytest.mark.parametrize("text", INSTRUCTIONS)
def test_instructions_are_recognised(text: str) -> None:
    assert is_standing_instruction(text)


@pytest.mark.parametrize("text", NOT_INSTRUCTIONS)
def test_other_sentences_are_not(text: str) -> None:
    assert not is_standing_instruction(text)


def ranked(*rows: tuple[str, int | None]) -> list[RankedCandidate]:
    """Best first: (id, semantic rank or None), finals 1.0, 0.9, …"""
    return [
        RankedCandidate(
            FusedCandidate(memory_id, 0.0, {} if semantic is None else {"semantic": semantic}),
            final=1.0 - 0.1 * i,
            cross_encoder=None,
        )
        for i, (memory_id, semantic) in enumerate(rows)
    ]


def ids(rows: list[RankedCandidate]) -> list[str]:
    return [r.candidate.id for r in rows]


def test_an_instruction_moves_up_to_its_semantic_rank() -> None:
    rows = ranked(("a", 3), ("b", None), ("c", 4), ("rule", 2), ("d", 1))
    placed = place_instructions(rows, {"rule"}, max_rank=5)
    assert ids(placed) == ["a", "rule", "b", "c", "d"]
    finals = [r.final for r in placed]
    assert finals == sorted(finals, reverse=True)
    assert len(set(finals)) == len(finals)
    # nothing but the moved one changes
    assert {r.candidate.id: r for r in placed if r.candidate.id != "rule"} == {
        r.candidate.id: r for r in rows if r.candidate.id != "rule"
    }


def test_only_instructions_within_the_rank_move() -> None:
    rows = ranked(("a", 1), ("b", 2), ("c", 3), ("deep", 6), ("other", 2))
    assert ids(place_instructions(rows, {"deep"}, max_rank=5)) == ids(rows)
    # a memory that isn't an instruction keeps its place whatever its semantic rank
    assert ids(place_instructions(rows, set(), max_rank=5)) == ids(rows)
    # off
    assert ids(place_instructions(rows, {"other"}, max_rank=0)) == ids(rows)
    assert ids(place_instructions(rows, {"other"}, max_rank=2)) == ["a", "other", "b", "c", "deep"]


def test_an_instruction_already_higher_stays() -> None:
    rows = ranked(("rule", 4), ("a", 1), ("b", 2))
    assert place_instructions(rows, {"rule"}, max_rank=5) == rows


def test_an_instruction_in_place_is_not_pushed_below_it_by_others() -> None:
    rows = ranked(("x", None), ("r2", 2), ("y", None), ("r1", 1), ("r3", 3))
    placed = place_instructions(rows, {"r1", "r2", "r3"}, max_rank=10)
    assert ids(placed) == ["r1", "r2", "r3", "x", "y"]
    assert ids(place_instructions(ranked(("x", None), ("r2", 2), ("r1", 1)), {"r1", "r2"}, 10)) == [
        "r1",
        "r2",
        "x",
    ]
    # one already above its semantic rank keeps that place unless a better one takes it
    assert ids(place_instructions(ranked(("r5", 5), ("x", None), ("r1", 1)), {"r1", "r5"}, 10)) == [
        "r1",
        "r5",
        "x",
    ]


def test_finals_stay_sorted_at_the_edges() -> None:
    rows = ranked(("a", None), ("b", None), ("rule", 1))
    top = place_instructions(rows, {"rule"}, max_rank=10)
    assert ids(top) == ["rule", "a", "b"]
    assert rows[0].final < top[0].final <= rows[0].final / SCORE_STEP + 1e-12
    level = [replace(r, final=0.5) for r in ranked(("a", 1), ("b", None), ("rule", 2))]
    middle = place_instructions(level, {"rule"}, max_rank=10)
    assert ids(middle) == ["a", "rule", "b"]
    assert [r.final for r in middle] == [0.5, 0.5, 0.5]


def test_two_instructions_take_their_own_ranks_and_the_top_gets_a_higher_final() -> None:
    rows = ranked(("a", None), ("b", None), ("c", None), ("r2", 2), ("r1", 1))
    placed = place_instructions(rows, {"r1", "r2"}, max_rank=5)
    assert ids(placed) == ["r1", "r2", "a", "b", "c"]
    finals = [r.final for r in placed]
    assert finals == sorted(finals, reverse=True)
    assert placed[0].final > rows[0].final


# A student's chat about existentialism, and one rule about how to answer such questions.
SEMINAR = [
    "user: I've been reading Sartre's Being and Nothingness for my philosophy seminar and "
    "I'm struggling with his idea that existence precedes essence, can you walk me through "
    "it with examples from everyday life?",
    "assistant: Sartre's claim that existence precedes essence means we are not born with a "
    "fixed nature; we first exist, then define ourselves through our choices. A waiter who "
    "plays at being a waiter too perfectly is, for Sartre, in bad faith.",
    "user: My seminar group is split on whether Camus counts as an existentialist at all, "
    "since he rejected the label, how should I frame that in my essay on the absurd?",
    "assistant: Camus rejected the label, but his essays share existentialism's starting "
    "point: a world without given meaning. His answer is revolt, living lucidly with the "
    "absurd, as Sisyphus does.",
    "user: Always mention the key philosophers by name when I ask about existentialism.",
    "user: I'm planning a reading schedule for the next six weeks so I can finish "
    "Kierkegaard's Fear and Trembling before the midterm, can you help me split it up?",
    "user: I keep confusing Heidegger's idea of authenticity with Sartre's bad faith, can "
    "you compare them for me in a short table?",
    "user: Our seminar discussion on anxiety and freedom in existentialist thought went "
    "well, and the professor liked my point about dread as the dizziness of freedom.",
    "user: I want to write my final paper on how existentialist ideas about freedom and "
    "responsibility show up in modern novels, which books would make good case studies?",
    "user: I booked the library study room on Thursday evenings for our reading group.",
    "user: My sister thinks existentialism is just gloomy pessimism, and I'd like to explain "
    "to her why it can be hopeful instead.",
    "user: The professor said our essays on existentialism must be under 3,000 words and "
    "cite at least four primary sources.",
]
RULE = "seminar-4"


def _place(
    settings: Settings, rank: int, question: str = "What can you tell me about existentialism?"
) -> tuple[int, int, list[bool], str]:
    changed = settings.model_copy(update={"instruction_rank": rank})
    with MemoryEngine(settings=changed) as engine:
        bank = "standing-instructions"
        engine.delete_bank(bank)
        engine.retain(
            bank,
            [
                {"id": f"seminar-{i}", "text": text, "document_id": "seminar-chat"}
                for i, text in enumerate(SEMINAR)
            ],
        )
        result = engine.recall(bank, question, trace=True)
    ids = [m.id for m in result.memories]
    semantic = result.memories[ids.index(RULE)].source_ranks["semantic"]
    flags = [m.instruction for m in result.memories]
    lines = "\n".join(memory_line(m) for m in result.memories)
    return ids.index(RULE), semantic, flags, format_result(result, explain=True) + lines


def test_a_standing_instruction_is_placed_at_its_semantic_rank(settings: Settings) -> None:
    unplaced, semantic, off_flags, off_text = _place(settings, 0)
    assert unplaced > semantic - 1  # the reranking stages put it below its semantic rank
    assert not any(off_flags) and "standing instruction" not in off_text  # off is off
    placed, semantic_again, flags, explained = _place(settings, 5)
    assert semantic_again == semantic <= 5
    assert placed == semantic - 1
    assert flags == [i == placed for i in range(len(flags))]
    assert "a standing instruction" in explained
    assert explained.count("(world, standing instruction) user: Always mention") == 1
    assert explained.count("standing instruction") == 2


def test_a_question_about_a_period_places_no_instruction(settings: Settings) -> None:
    question = "What did I say about existentialism in March 2024?"
    off, semantic, _, _ = _place(settings, 0, question)
    on, _, flags, _ = _place(settings, 10, question)
    assert semantic - 1 < off  # it would move, were the question not about a period
    assert on == off and flags[on]
