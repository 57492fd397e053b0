"""Tests for the heuristic fallback entity extractor."""

from __future__ import annotations

import pytest

from hindsight_tools.query.entities import EntityExtractor, extract_entities

CASES: list[tuple[str, list[str]]] = [
    # Multi-word proper nouns stay together.
    ("Alice joined Google Cloud in Berlin", ["Alice", "Google Cloud", "Berlin"]),
    ("He banks with Bank of America.", ["Bank of America"]),
    ("She studied at the University of Toronto", ["University of Toronto"]),
    ("We flew to Rio de Janeiro and then Buenos Aires.", ["Rio de Janeiro", "Buenos Aires"]),
    # Lowercase connectors never start or end a name.
    ("I told Alice of the plan.", ["Alice"]),
    ("Paris of course", ["Paris"]),
    ("Lena, the CTO of the Amsterdam startup, called.", ["Lena", "CTO", "Amsterdam"]),
    ("They met at the Museum of the Moving Image.", ["Museum of the Moving Image"]),
    # LoCoMo-style conversational lines.
    (
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        ["Caroline", "LGBTQ"],
    ),
    (
        "Melanie: Wow, that's cool, Caroline! What happened that was so awesome?",
        ["Melanie", "Caroline"],
    ),
    ("Caroline: Hey Mel!", ["Caroline", "Mel"]),
    ("Thanks Caroline! Yesterday I met Grace at Starbucks.", ["Caroline", "Grace", "Starbucks"]),
    # Sentence-initial common words are not entities; later capitals are trusted.
    ("Good luck with that. So how was it? Really fun.", []),
    ("Yeah, Mel. Oh and Jon said hi.", ["Mel", "Jon"]),
    ("The Hague is nice.\nHey Sam", ["Hague", "Sam"]),
    ("New shoes arrived. New York is loud.", ["New York"]),
    # Pronouns are never entities.
    ("I think I'm done, I've tried and I'll stop.", []),
    ("Yesterday I met Priya.", ["Priya"]),
    # Bare months and weekdays are dropped, longer names containing them kept.
    ("We met on Monday in March and again in May.", []),
    ("We watched March Madness on Sunday.", ["March Madness"]),
    # Acronyms of 2-6 letters are kept, shouting is not.
    ("NASA and IBM hired her.", ["NASA", "IBM"]),
    ("That was AMAZING and SPECTACULAR", []),
    ("OMG it was OK", []),
    # Possessives and other clitics are stripped.
    ("Melanie's kids love the park.", ["Melanie"]),
    ("Bank of America's CEO resigned.", ["Bank of America", "CEO"]),
    ("Alice\u2019s dog met Bob's cat.", ["Alice", "Bob"]),
    # Apostrophe and hyphen names survive intact.
    ("We visited O'Brien and Jean-Luc Picard.", ["O'Brien", "Jean-Luc Picard"]),
    ("She joined a Berlin-based startup.", ["Berlin"]),
    # Unicode letters count as letters.
    ("Zoë moved from Łódź to São Paulo.", ["Zoë", "Łódź", "São Paulo"]),
    ("Zoe\u0308 arrived.", ["Zoë"]),
    ("東京で寿司を食べました。", []),
    ("Then we met Иван Петров in Москва.", ["Иван Петров", "Москва"]),
    # Titles glued by an abbreviation period.
    ("Dr. Smith lives in St. Louis.", ["Dr. Smith", "St. Louis"]),
    # Camel-case product names.
    ("I love my iPhone and eBay.", ["iPhone", "eBay"]),
    # URLs and e-mail addresses are not mined for capitals.
    ("Email Alice.Smith@Example.com or see https://Foo.Bar/Baz today", []),
    # Numbers with dots and colons are not sentence boundaries.
    ("At 10:30 The meeting began.", []),
    # Control characters separate words like punctuation does.
    ("Alice\x00Bob", ["Alice", "Bob"]),
    # Nothing to find.
    ("", []),
    ("   \n\t ", []),
    ("all lowercase text about google and paris", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_extract_entities_table(text: str, expected: list[str]) -> None:
    assert extract_entities(text) == expected


def test_deduplicates_case_insensitively_keeping_first_surface() -> None:
    text = "NASA called. Later Nasa called again, and NASA once more. Alice met ALICE?"
    assert extract_entities(text) == ["NASA", "Alice"]


def test_preserves_first_appearance_order() -> None:
    text = "Zed met Yara. Then Xavier met Zed and Yara met Walter."
    assert extract_entities(text) == ["Zed", "Yara", "Xavier", "Walter"]


def test_is_deterministic() -> None:
    text = "Caroline: Hey Mel! Melanie's trip to São Paulo with Dr. Okafor was great."
    first = extract_entities(text)
    assert first == ["Caroline", "Mel", "Melanie", "São Paulo", "Dr. Okafor"]
    for _ in range(20):
        assert extract_entities(text) == first


def test_returns_fresh_list_each_call() -> None:
    result = extract_entities("Alice met Bob.")
    result.append("Mallory")
    assert extract_entities("Alice met Bob.") == ["Alice", "Bob"]


def test_satisfies_entity_extractor_protocol() -> None:
    extractor: EntityExtractor = extract_entities
    assert extractor("Alice joined Google Cloud in Berlin") == [
        "Alice",
        "Google Cloud",
        "Berlin",
    ]


def test_custom_callable_satisfies_protocol() -> None:
    def shouty(text: str) -> list[str]:
        return [w for w in text.split() if w.isupper()]

    extractor: EntityExtractor = shouty
    assert extractor("hi NASA") == ["NASA"]


HOSTILE: list[str] = [
    "",
    "\x00",
    "Alice\x00Bob",
    "\x00" * 10_000,
    "\ud800 lone surrogate Alice",
    "😀" * 1000 + " Alice " + "🇺🇸" * 100,
    "Zoe\u0301\u0301\u0301\u0301",
    "'" * 5000,
    "-" * 5000 + "A",
    "A-" * 5000,
    "a'" * 5000,
    "A " * 20_000,
    "Alice of " * 5000,
    "of the " * 5000,
    "x@" * 20_000,
    "a" * 100_000 + " @",
    "https://" * 1000,
    "www." * 1000,
    ".:!?" * 5000,
    "\u2028\u2029\x85\x0b\x0c" * 1000,
    "ǅemal ǈubljana",
    "١٢٣ ٤٥٦ عربي",
    "\U0001d400\U0001d425\U0001d422\U0001d41c\U0001d41e \U0001d505\U0001d52c\U0001d51f",
    "İstanbul ß ẞ ﬁ",
    "\t\r\n" * 1000,
    "Dr." * 1000,
    "I'" * 1000,
    "\u2019s" * 1000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_never_raises_and_returns_unique_strings(text: str) -> None:
    result = extract_entities(text)
    assert isinstance(result, list)
    assert all(isinstance(item, str) and item for item in result)
    keys = [item.casefold() for item in result]
    assert len(keys) == len(set(keys))
    assert all(len(item) <= 100 for item in result)


def test_megabyte_input_is_handled() -> None:
    line = "Caroline: I went to a LGBTQ support group with Melanie in San Francisco.\n"
    text = line * (1_000_000 // len(line))
    assert extract_entities(text) == ["Caroline", "LGBTQ", "Melanie", "San Francisco"]
