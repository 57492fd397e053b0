"""A question that says when something was told ("last week, as mentioned on November 6,
2023"), and a vague word beside a precise one ("recently in May 2022"): pure, no database.

The same fixed ``NOW`` and conventions as ``test_temporal.py``: Wednesday 2024-06-12,
15:30 UTC; ends inclusive (``E``).
"""

from __future__ import annotations

import pytest

from hindsight_tools.query.time_window import extract_time_window
from tests.test_temporal import NOW, E, assert_exact_window

TOLD = [
    # the teller's relative words are read from the day it was told, up to that day
    (
        "What was Tim's huge writing issue last week,as mentioned on November 6, 2023?",
        "2023-10-30",
        "2023-11-06" + E,
    ),
    ("What did Jon do yesterday, as he said on March 3, 2023?", "2023-03-02", "2023-03-03" + E),
    ("Which trip last month, as she told me in May 2023?", "2023-04-01", "2023-05-31" + E),
    # the aside may come first
    (
        "As mentioned on November 6, 2023, what was Tim's issue last week?",
        "2023-10-30",
        "2023-11-06" + E,
    ),
    # a period after the day it was told: the window spans both
    ("What will Ana do next month, as she said on May 3, 2023?", "2023-05-03", "2023-06-30" + E),
    # a name in a relative unit is pinned from that day too
    (
        "What did Ana do on Monday of last week, as she said on May 3, 2023?",
        "2023-04-24",
        "2023-05-03" + E,
    ),
    (
        "What did Ana do in March of last year, as she said in May 2023?",
        "2022-03-01",
        "2023-05-31" + E,
    ),
    # nothing else named, or only a vague word: the day alone
    ("What did Tim say, as mentioned on November 6, 2023?", "2023-11-06", "2023-11-06" + E),
    ("What did Ana start recently, as mentioned on 3 June, 2023?", "2023-06-03", "2023-06-03" + E),
    (
        "What did Tim watch during Thanksgiving, as he mentioned on November 6, 2023?",
        "2023-11-06",
        "2023-11-06" + E,
    ),
    # a period with its own year stays itself, and runs to the day it was told
    ("What did Ana do in May 2022, as she noted on June 3, 2022?", "2022-05-01", "2022-06-03" + E),
    # an open side stays open
    ("What changed since March 2023, as reported on May 1, 2023?", "2023-03-01", None),
]


@pytest.mark.parametrize(("text", "start", "end"), TOLD, ids=[c[0] for c in TOLD])
def test_a_told_day_reads_the_question_from_it(
    text: str, start: str | None, end: str | None
) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # without "as" the telling is no aside: "yesterday" is the asker's
        (
            "What did Alice say yesterday about the plan she mentioned on May 3, 2023?",
            "2024-06-11",
            "2024-06-11" + E,
        ),
        # "as of" asks for a state then, not when it was told
        ("Where did Ana work last month, as of May 2023?", "2024-05-01", "2024-05-31" + E),
        # "as soon as", "the same as" are no aside
        ("What did Bob do last week as soon as I told him on Friday?", "2024-06-03",
         "2024-06-09" + E),
        ("Is revenue in 2024 the same as reported in 2023?", "2024-01-01", "2024-12-31" + E),
        # a told day without its year is read as any other expression
        ("What did Bob do last week, as he said on Friday?", "2024-06-03", "2024-06-09" + E),
    ],
)  # fmt: skip
def test_only_an_aside_of_telling_moves_now(text: str, start: str, end: str) -> None:
    assert_exact_window(text, start, end)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("What filling did Joanna use in the cake she made recently in May 2022?",
         "2022-05-01", "2022-05-31" + E),
        ("What movie did Nate recently watch and enjoy on October 6, 2022?",
         "2022-10-06", "2022-10-06" + E),
        ("What did I do lately, since March 2024?", "2024-03-01", None),
        ("What charity event did John organize recently in 2024?", "2024-01-01", "2024-12-31" + E),
    ],
)  # fmt: skip
def test_a_precise_period_wins_over_a_vague_one_before_it(
    text: str, start: str | None, end: str | None
) -> None:
    assert_exact_window(text, start, end)
    found = extract_time_window(text, NOW)
    assert found is not None and not found.vague


def test_a_vague_word_alone_stays_vague() -> None:
    found = extract_time_window("What did Maria start recently?", NOW)
    assert found is not None and found.vague
    assert found.end is not None and found.end.date() == NOW.date()


def test_a_vague_holiday_alone_told_on_no_day_stays_vague() -> None:
    found = extract_time_window("What did Bob buy, as he mentioned at Christmas?", NOW)
    assert found is not None and found.vague


def test_the_last_unit_before_a_day_is_counted_from_that_day() -> None:
    text = "What did Maria participate in last weekend before April 10, 2023?"
    assert_exact_window(text, "2023-04-08", "2023-04-09" + E)
    assert_exact_window("the last week before Christmas 2022", "2022-12-12", "2022-12-18" + E)
    # "last weekend" alone is still the one before now
    assert_exact_window("What did Maria do last weekend?", "2024-06-08", "2024-06-09" + E)
    # without a year, or after the day, "last" is the asker's
    assert_exact_window("What did I do last week before Friday?", "2024-06-03", "2024-06-09" + E)
    assert_exact_window("What did Ana do last year after Easter?", "2023-01-01", "2023-12-31" + E)
