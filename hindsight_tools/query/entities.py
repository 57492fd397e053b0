"""Heuristic, dependency-free extraction of names and proper nouns.

This is the fallback used when a memory item arrives without ``entities``.
No NER model can be downloaded in the environments this package targets, so
instead of a statistical tagger we rely on English capitalisation:

* A *run* of capitalised words separated only by spaces is one entity
  ("Google Cloud", "São Paulo"). A few lowercase particles may sit inside a
  run ("Bank of America", "Rio de Janeiro") but never at its ends.
* Capitalisation is ambiguous at the start of a sentence (after the start of
  the text, ``.``, ``!``, ``?``, a newline, a quote or a ``Speaker:`` prefix),
  so there a leading word is discarded when it is in a built-in list of common
  English words, function words and chat interjections ("Hey Mel!" -> "Mel").
  Everywhere else a capitalised word is trusted.
* Pronouns ("I", "I'm"), single letters and bare month/weekday names are never
  entities; a month inside a longer name ("March Madness") is kept.
* All-caps words are kept as acronyms when they have 2-6 letters ("NASA",
  "LGBTQ") and are not shouted common words ("OMG", "OK").
* Clitics are stripped ("Melanie's" -> "Melanie") and end the run, so a
  possessive never glues two names together.

Callers who need better recall can pass any callable matching
:class:`EntityExtractor` instead.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol

__all__ = ["EntityExtractor", "extract_entities"]


class EntityExtractor(Protocol):
    """Anything that maps a text to its entity names."""

    def __call__(self, text: str) -> list[str]: ...


def _words(spec: str) -> list[str]:
    return spec.split()


# Letters only at the start so numbers like "2023" never become names; digits
# are allowed later for "COVID-19" or "R2D2". Separators must be followed by a
# word character, which keeps the pattern free of ambiguous backtracking.
_WORD_SPLIT_RE = re.compile(r"([^\W\d_][^\W_]*(?:['\u2019\-][^\W_]+)*)")

# Horizontal whitespace only: a line break between two capitalised words
# means they are not one name.
_HSPACE_RE = re.compile(r"[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")

# Anything after which the next word may be capitalised for grammatical
# rather than lexical reasons. Periods and colons inside numbers ("3.5",
# "10:30") are excluded so they don't mark a new sentence.
_SENTENCE_RE = re.compile(
    r"[!?…\n\r\v\f\x1c-\x1e\x85\u2028\u2029;\"“”„«»(\[\u2018'¡¿]|\.(?!\d)|:(?!\d)"
)

# An abbreviation's period followed by spaces: "Dr. Smith", "St. Louis".
_ABBREV_GAP_RE = re.compile(r"\.[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*")

_CLITIC_RE = re.compile(r"['\u2019](?:s|ll|re|ve|d|m)$", re.IGNORECASE)

# URLs and e-mail addresses are full of capitalised fragments that are not
# names. The lookbehind and possessive quantifier keep the e-mail branch linear
# on long runs of word characters with a stray "@" somewhere.
_URL_EMAIL_RE = re.compile(r"(?:https?://|www\.)\S+|(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+")

# Names longer than this are almost surely Title Case headings or garbage;
# capping them keeps the output usable on hostile input.
_MAX_ENTITY_CHARS = 100

# Lowercase particles that may appear inside a multi-word name.
_CONNECTORS = frozenset(
    _words("of the de del della der di da do dos das du la le van von y bin ibn upon")
)
_MAX_CONNECTORS = 2

_MONTHS_WEEKDAYS = frozenset(
    _words("""
    january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday
    """)
)

# Abbreviations whose trailing period does not end a sentence.
_ABBREVIATIONS = frozenset(
    _words("mr mrs ms dr prof st mt ft jr sr gen col capt sgt lt rev hon sen rep gov")
)

# At a sentence start these common words would otherwise be dropped from a
# longer run, but they often begin real place or organisation names
# ("New York", "United States", "North Korea", "Black Friday").
_NAME_HEADS = frozenset(
    _words("""
    new great old big little first north south east west northern southern
    eastern western upper lower central united royal national grand golden
    red black white green blue high long
    """)
)

# Words that are capitalised at a sentence start far more often than they are
# names. Kept to a few hundred entries: anything not here is trusted, so the
# list errs towards chat openers seen in conversational memories.
_COMMON_WORDS = frozenset(
    _words("""
    a about above after again against ago ah aha ahh all almost alright also
    although always am amazing an and another any anybody anyone anything
    anyway anyways are around as at aw awesome aww awww back be because been
    before being below besides best better between both but by bye can
    certainly cheers check come congrats congratulations cool could dear
    definitely did do does doing done down during each either else even ever
    every everybody everyone everything exactly fantastic few finally first
    for from fun funny gee glad go going gonna good goodbye got gotta great
    guess had haha hahaha has have having he hello hence her here hers herself
    hey hi him himself his hm hmm honestly hope hopefully how however huh i
    idk if im in indeed instead interesting into is isn it its itself just
    keep kinda last lately later least less let lets like literally lol look
    looks lot lots love lovely made make many may maybe me meanwhile might
    mine more moreover most much must my myself nah near neither never new
    next nice no nobody none nor not nothing now of off oh ok okay omg on once
    one only onto oops or other others otherwise our ours ourselves out over
    perhaps please plus pretty probably quite rather really recently right
    said same say says see seems she should since so some somebody someone
    something sometimes soon sorry speaking still such sure surely than thank
    thanks thankfully that the their theirs them themselves then there
    therefore these they thing things this those though through thus to today
    together tomorrow tonight too totally true truly ugh um under unless until
    up upon us usually very wait wanna was we well went were what whatever
    when whenever where wherever whether which while who whoa whoever whole
    whom whose why will with within without wonderful would wow yay yeah yep
    yes yesterday yet you your yours yourself yourselves yup
    absolutely actually already anyhow apparently basically beautiful
    clearly currently eventually especially generally happy hurray luckily
    naturally obviously often originally personally seriously similarly
    sadly suddenly tbh btw fyi imo ya y'all ma'am sir madam
    spring summer autumn fall winter morning afternoon evening night weekend
    user assistant system human bot note update reminder question answer
    welcome sounds seem looking feeling thinking having getting being
    guys folks everybody someday lately here's there's
    bro dude man girl buddy mate pm
    email call text send ask tell meet met remember try take give bring
    enjoy stay imagine listen went got saw told called asked tried started
    finished took gave found felt thought knew wanted needed loved liked
    bought visited spent watched played wrote ran came
    """)
)

# Closed-class words that are never a name on their own, wherever they are
# capitalised ("At 10:30 The meeting began").
_FUNCTION_WORDS = frozenset(
    _words("""
    a an the and or but nor of in on at by to from with into onto for as
    is are was were be been am do does did has have had this that these those
    it its he she him her his we our they them their you your my me what
    which who whom whose when where why how if then than not
    """)
)

# Only "I" is always capitalised; treating it (and its contractions) as a
# name would pollute almost every first-person memory.
_PRONOUN = "i"

# Shouted words that look like acronyms but are not names.
_ALLCAPS_NAMES = frozenset({"us"})


def _key(word: str) -> str:
    key = word.casefold()
    return key.replace("\u2019", "'") if "\u2019" in key else key


def _emit(
    words: list[str],
    joins: list[str],
    at_sentence_start: bool,
    out: list[str],
    seen: set[str],
) -> None:
    n = len(words)
    i = 0
    if at_sentence_start:
        keys = [_key(w) for w in words]
        while i < n - 1 and keys[i] in _COMMON_WORDS and keys[i] not in _NAME_HEADS:
            i += 1
        while i < n and keys[i] in _CONNECTORS and words[i].islower():
            i += 1
        if n - i == 1 and (keys[i] in _COMMON_WORDS or keys[i] in _NAME_HEADS):
            return
    if i >= n:
        return
    if n - i == 1:
        word = words[i]
        key = _key(word)
        if (
            len(word) == 1
            or key in _MONTHS_WEEKDAYS
            or key in _ABBREVIATIONS
            or key in _FUNCTION_WORDS
        ):
            return
        surface = word
    else:
        parts = [words[i]]
        for j in range(i + 1, n):
            parts.append(joins[j])
            parts.append(words[j])
        surface = "".join(parts)
    if len(surface) > _MAX_ENTITY_CHARS:
        return
    # Same folding as lookups, so "O'Brien" and "O\u2019Brien" count once.
    key = _key(surface)
    if key not in seen:
        seen.add(key)
        out.append(surface)


def _is_hspace(gap: str) -> bool:
    return gap == " " or _HSPACE_RE.fullmatch(gap) is not None


def extract_entities(text: str) -> list[str]:
    """Names and proper nouns in `text`, in first-appearance order.

    De-duplicated case-insensitively (the first spelling wins). Never raises on
    any ``str``, including empty, NUL-laden, emoji-only or multi-megabyte input.
    """
    if not text:
        return []
    # Decomposed accents ("Zoe" + U+0308) would otherwise split a word in two,
    # because combining marks are not word characters for `re`.
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if "@" in text or "://" in text or "www." in text:
        text = _URL_EMAIL_RE.sub(" , ", text)

    out: list[str] = []
    seen: set[str] = set()
    run: list[str] = []
    joins: list[str] = []
    pending: list[str] = []
    run_at_start = False
    prev_abbrev = False

    # split() hands back [gap, word, gap, word, ..., gap] without building a
    # match object per word, which is most of the cost on short texts.
    parts = _WORD_SPLIT_RE.split(text)
    for idx in range(1, len(parts), 2):
        word = parts[idx]
        gap = parts[idx - 1]

        if word.islower():
            # An acronym before "of" is nearly always a job title ("CTO of the
            # Amsterdam startup"), not the head of a longer name.
            if (
                run
                and word in _CONNECTORS
                and len(pending) < _MAX_CONNECTORS
                and not run[-1].isupper()
                and _is_hspace(gap)
            ):
                pending.append(word)
            else:
                if run:
                    _emit(run, joins, run_at_start, out, seen)
                    run = []
                    joins = []
                pending = []
                prev_abbrev = False
            continue

        base = word
        ends_run = False
        clitic = _CLITIC_RE.search(word) if ("'" in word or "\u2019" in word) else None
        if clitic is not None and clitic.start() > 0:
            base = word[: clitic.start()]
            ends_run = True
        if "-" in base:
            # "Berlin-based" names Berlin; "Jean-Luc" and "COVID-19" stay whole.
            pieces = base.split("-")
            keep = 1
            while keep < len(pieces) and not pieces[keep][0].islower():
                keep += 1
            if keep < len(pieces):
                base = "-".join(pieces[:keep])
                ends_run = True
        key = base.casefold()
        if "\u2019" in key:
            key = key.replace("\u2019", "'")
        head = base[0]

        proper = True
        if key == _PRONOUN or key.endswith("n't"):
            proper = False
        elif head.isupper() or head.istitle():
            if len(base) > 1 and base.isupper():
                shouted = len(base) > 6 and sum(1 for ch in base if ch.isalpha()) > 6
                if shouted or (key in _COMMON_WORDS and key not in _ALLCAPS_NAMES):
                    proper = False
        elif not head.islower():
            # Caseless scripts (CJK, Arabic, ...) carry no capitalisation signal.
            proper = False
        # Otherwise: lowercase-initial but not all lowercase, i.e. "iPhone".

        if not proper:
            if run:
                _emit(run, joins, run_at_start, out, seen)
                run = []
                joins = []
            pending = []
            prev_abbrev = False
            continue

        if prev_abbrev and run and not pending and _ABBREV_GAP_RE.fullmatch(gap):
            continues = True
            joiner = ". "
        else:
            continues = bool(run) and _is_hspace(gap)
            joiner = " "

        if continues:
            for connector in pending:
                joins.append(" ")
                run.append(connector)
            joins.append(joiner)
            run.append(base)
        else:
            if run:
                _emit(run, joins, run_at_start, out, seen)
            run = [base]
            joins = [""]
            run_at_start = idx == 1 or _SENTENCE_RE.search(gap) is not None
        pending = []
        prev_abbrev = not ends_run and key in _ABBREVIATIONS and parts[idx + 1].startswith(".")

        if ends_run:
            _emit(run, joins, run_at_start, out, seen)
            run = []
            joins = []

    if run:
        _emit(run, joins, run_at_start, out, seen)
    return out
