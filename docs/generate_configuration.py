"""Write docs/configuration.md from ``hindsight_tools.Settings``, so the page can't drift.

    .venv/bin/python docs/generate_configuration.py > docs/configuration.md
    .venv/bin/python docs/generate_configuration.py --check   # exit 1 if the page is stale

Only the model's fields are read (their type, default, constraints and description); the
descriptions a field doesn't carry itself, the defaults computed at run time and the section
headings are kept here, and any of them naming a field that no longer exists is an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# This checkout's package, not whichever one the environment has installed.
REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hindsight_tools.settings import Settings  # noqa: E402

PAGE = REPO / "docs" / "configuration.md"
COMMAND = ".venv/bin/python docs/generate_configuration.py > docs/configuration.md"

# The first field of each group of settings.py, and the group's heading.
SECTIONS: dict[str, str] = {
    "database_url": "Store",
    "embeddings_model": "Models",
    "retain_max_text_chars": "Retain",
    "text_search_extension": "Recall arms",
    "reranker_provider": "Rerank",
    "recency_function": "Scoring",
    "recall_budget_function": "Budgets",
}

# Defaults computed when the settings are built (they depend on the user and the machine).
COMPUTED_DEFAULTS: dict[str, str] = {
    "data_dir": "`/var/lib/hindsight-tools` as root, else the user's data directory "
    "(`~/.local/share/hindsight-tools` on Linux)",
    "embeddings_onnx_cache_dir": "the user's cache directory + `hindsight-tools/onnx` "
    "(`~/.cache/hindsight-tools/onnx` on Linux)",
}

# For fields declared without a description.
DESCRIPTIONS: dict[str, str] = {
    "pool_min_size": "Connections each engine's pool keeps open.",
    "pool_max_size": "Most connections each engine's pool opens; a call waits for a free one "
    "at most pool_timeout.",
    "embeddings_batch_size": "Texts per embedding model call at retain.",
    "retain_max_text_chars": "Longest memory text (and context) in characters.",
    "retain_max_items": "Most items in one retain call.",
    "retain_max_tags": "Most tags per item.",
    "semantic_link_threshold": "Retain links a memory to its neighbours with at least this "
    "cosine similarity.",
    "semantic_link_top_k": "At most this many semantic links per retained memory; 0 = none.",
    "temporal_link_window_hours": "Retain links memories whose event times are at most this "
    "many hours apart.",
    "temporal_link_max": "At most this many temporal links per retained memory; 0 = none.",
    "text_search_extension_native_language": "PostgreSQL text search configuration for the "
    "keyword arm's lexemes (both backends).",
    "bm25_k1": "BM25 term-frequency saturation.",
    "bm25_b": "BM25 document-length normalisation.",
    "bm25_exact_postings": "Postings of a question's terms the keyword arm reads in full; "
    "past them the rarest terms choose its candidates, at most this many, and the other "
    "terms only score them.",
    "semantic_min_similarity": "Lowest cosine similarity the semantic arm (and the graph "
    "arm's seeds) keeps.",
    "graph_per_entity_limit": "Memories the graph arm expands to per shared entity.",
    "temporal_min_similarity": "Lowest similarity to the query a memory inside the time "
    "window needs for the temporal arm; -1 takes every memory of the window, best match first.",
    "temporal_exact_window_rows": "Memories a time window may hold and still be scored one by "
    "one; a wider window's nearest memories are found through the vector index instead.",
    "reranker_depth_low": "Candidates a cross-encoder scores at budget low.",
    "reranker_depth_mid": "Candidates a cross-encoder scores at budget mid; with late "
    "interaction off, 24 is advised.",
    "reranker_depth_high": "Candidates a cross-encoder scores at budget high.",
    "reranker_local_model": "sentence-transformers CrossEncoder of the local provider: a "
    "folder, or a model already in the Hugging Face cache (nothing is downloaded).",
    "reranker_local_batch_size": "Pairs per call of the local cross-encoder.",
    "reranker_onnx_batch_size": "Pairs per call of the ONNX cross-encoder.",
    "reranker_onnx_max_length": "Tokens a (query, memory) pair is cut to for the ONNX "
    "cross-encoder.",
    "reranker_cohere_model": "Model of the cohere provider.",
    "reranker_cohere_api_key": "API key of the cohere provider (required to use it).",
    "reranker_cohere_base_url": "Base URL of the Cohere API; unset = the SDK's.",
    "reranker_tei_url": "Text Embeddings Inference server of the tei provider (required to "
    "use it).",
    "reranker_tei_batch_size": "Pairs per request to the TEI server.",
    "recency_function": "How recency falls with age: linear over a year, exponential by "
    "half-life, or none.",
    "recency_half_life_days": "Half-life of the exponential recency function.",
    "recency_alpha": "Weight of the recency boost, 1 + alpha·(signal − 0.5).",
    "temporal_alpha": "How much of its relevance a memory far outside the query's time window "
    "loses; 0 lets the window only gather candidates through the temporal arm.",
    "proof_count_alpha": "Weight of the proof-count boost.",
    "recall_budget_function": "fixed: the low/mid/high sizes below; adaptive: a share of "
    "max_tokens within min and max.",
    "recall_budget_low": "Candidates per arm at budget low (fixed).",
    "recall_budget_mid": "Candidates per arm at budget mid (fixed).",
    "recall_budget_high": "Candidates per arm at budget high (fixed).",
    "recall_budget_min": "Smallest adaptive recall budget.",
    "recall_budget_max": "Largest adaptive recall budget.",
}

_BOUNDS: dict[type, str] = {Ge: "≥", Gt: ">", Le: "≤", Lt: "<"}
_BOUND_ATTRS: dict[type, str] = {Ge: "ge", Gt: "gt", Le: "le", Lt: "lt"}


def env_var(name: str) -> str:
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return f"{prefix}{name}".upper()


def type_text(annotation: Any) -> str:
    """The type as a reader of an environment variable meets it."""
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f"`{value}`" for value in get_args(annotation))
    if origin in (Union, types.UnionType):
        # None is the "unset" of the default column
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return " \\| ".join(type_text(a) for a in parts)
    if origin is tuple:
        (item, _ellipsis) = get_args(annotation)
        return f"JSON list of {type_text(item)}"
    if origin is dict:
        return "JSON object of strings"
    if annotation is SecretStr:
        return "string (secret)"
    if annotation is Path:
        return "path"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if isinstance(annotation, type) and annotation in names:
        return names[annotation]
    raise ValueError(f"no rendering for the type {annotation!r}; add one to {__file__}")


def constraints(field: FieldInfo) -> str:
    found = []
    for item in field.metadata:
        for kind, sign in _BOUNDS.items():
            if isinstance(item, kind):
                found.append(f"{sign} {getattr(item, _BOUND_ATTRS[kind])}")
        if isinstance(item, MinLen):
            found.append(f"at least {item.min_length} item(s)")
    return ", ".join(found)


def default_text(name: str, field: FieldInfo) -> str:
    factory: Callable[[], Any] | None = field.default_factory  # type: ignore[assignment]
    if factory is not None:
        if name in COMPUTED_DEFAULTS:
            return COMPUTED_DEFAULTS[name]
        if factory in (dict, list, tuple):
            return f"`{json.dumps(factory())}`"
        raise ValueError(
            f"{name} has a computed default; describe it in COMPUTED_DEFAULTS of {__file__}"
        )
    value = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        return f"`{json.dumps(list(value))}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def description_text(name: str, field: FieldInfo) -> str:
    text = field.description or DESCRIPTIONS.get(name)
    if not text:
        raise ValueError(f"{name} has no description; add one to DESCRIPTIONS of {__file__}")
    return " ".join(text.split()).replace("|", "\\|")


def _check_names(fields: dict[str, FieldInfo]) -> None:
    for table, label in (
        (SECTIONS, "SECTIONS"),
        (COMPUTED_DEFAULTS, "COMPUTED_DEFAULTS"),
        (DESCRIPTIONS, "DESCRIPTIONS"),
    ):
        stale = sorted(set(table) - set(fields))
        if stale:
            raise ValueError(f"{label} of {__file__} names fields Settings lacks: {stale}")
    first = next(iter(fields))
    if first not in SECTIONS:
        raise ValueError(f"the first field, {first}, needs a heading in SECTIONS of {__file__}")


def render() -> str:
    fields = dict(Settings.model_fields)
    _check_names(fields)
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from hindsight_tools.Settings by docs/generate_configuration.py; "
        "do not edit by hand. -->",
        "",
        "Every setting is a field of `hindsight_tools.Settings` and an environment variable,",
        "read once when an engine is built. Pass `MemoryEngine(settings=Settings(...))` to set",
        "them in code; values from the environment are parsed by pydantic (JSON for lists and",
        "objects, `true`/`false` for booleans). How each one takes part in a recall:",
        "[design.md](design.md).",
        "",
        f"Regenerate this page with `{COMMAND}`.",
    ]
    for name, field in fields.items():
        if name in SECTIONS:
            lines += [
                "",
                f"## {SECTIONS[name]}",
                "",
                "| environment variable | type | default | description |",
                "|---|---|---|---|",
            ]
        kind = type_text(field.annotation)
        bounds = constraints(field)
        if bounds:
            kind = f"{kind}, {bounds}"
        lines.append(
            f"| `{env_var(name)}` | {kind} | {default_text(name, field)} | "
            f"{description_text(name, field)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help=f"compare with {PAGE.name} instead of printing"
    )
    args = parser.parse_args(argv)
    page = render()
    if not args.check:
        sys.stdout.write(page)
        return 0
    if PAGE.exists() and PAGE.read_text() == page:
        return 0
    print(f"{PAGE} is out of date; regenerate it with `{COMMAND}`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
