"""Counts in time words: "two weeks", "a couple of days", "several years", "10 days"."""

from __future__ import annotations

__all__ = ["COUNT", "NUMBER_WORD", "count_range"]

_WORD_NUMBERS = (
    *("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
)
NUMBER_WORD = {w: n for n, w in enumerate(_WORD_NUMBERS, start=1)} | {"thirty": 30}
COUNT = (
    r"(?:(?:a )?couple(?: of)?|(?:a )?few|several|\d{1,6}|"
    + "|".join(sorted(NUMBER_WORD, key=len, reverse=True))
    + r"|an|a)\b"
)
# couple and few are read as exact counts; several as 2-4 units ("a wider window")
_FUZZY = {"couple": (2, 2), "few": (3, 3), "several": (2, 4)}


def count_range(word: str) -> tuple[int, int]:
    """The fewest and the most units a count names ("several" is two to four)."""
    last = word.lower().replace(" of", "").split()[-1]
    if last in _FUZZY:
        return _FUZZY[last]
    n = int(last) if last.isdigit() else NUMBER_WORD.get(last, 1)
    return n, n
