"""The documentation stays true to the code: the configuration page is the one the settings
generate, links and anchors resolve, the sections the source points at exist, the examples'
imports exist, and every index lists every page it indexes."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = sorted([REPO / "README.md", *DOCS.rglob("*.md")])
GENERATOR = DOCS / "generate_configuration.py"
REGENERATE = ".venv/bin/python docs/generate_configuration.py > docs/configuration.md"

FENCED = re.compile(r"^```.*?^```[ \t]*$", flags=re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", flags=re.MULTILINE)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
# "(docs/design.md, The four arms)", "docs/design.md (Recall request)", possibly wrapped
DESIGN_REFERENCE = re.compile(r"docs/design\.md(?:,\s*|\s*\()([^)]*)\)")
DESIGN_SECTIONS = (
    "Store",
    "Retain",
    "Recall request",
    "The four arms",
    "Fusion",
    "Rerank",
    "Scoring",
    "Budgets and packing",
    "Result",
)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_configuration", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_page_is_generated_from_the_settings() -> None:
    page = (DOCS / "configuration.md").read_text()
    generated = _generator().render()
    assert page == generated, f"docs/configuration.md is stale; regenerate it: {REGENERATE}"


def test_the_configuration_page_names_every_setting() -> None:
    from hindsight_tools import Settings

    page = (DOCS / "configuration.md").read_text()
    for name in Settings.model_fields:
        assert f"`HINDSIGHT_API_{name.upper()}`" in page, name


def _prose(text: str) -> str:
    """The text without code blocks and code spans, where brackets aren't links."""
    return INLINE_CODE.sub("", FENCED.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for _, heading in HEADING.findall(FENCED.sub("", page.read_text())):
        slug = _slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


def _design_headings() -> tuple[set[str], set[str]]:
    text = FENCED.sub("", (DOCS / "design.md").read_text())
    sections = {h.lower() for level, h in HEADING.findall(text) if level == "##"}
    subsections = {h.lower() for level, h in HEADING.findall(text) if level == "###"}
    return sections, subsections


def test_the_design_document_has_the_sections_the_source_points_at() -> None:
    sections, subsections = _design_headings()
    for name in DESIGN_SECTIONS:
        assert name.lower() in sections, name
    assert "temporal" in subsections
    references = []
    sources = [*(REPO / "hindsight_tools").rglob("*.py"), *REPO.glob("adapters/**/*.py")]
    for source in sorted(sources):
        for raw in DESIGN_REFERENCE.findall(source.read_text()):
            references.append((source.relative_to(REPO), " ".join(raw.split())))
    assert references, "no source comment points at docs/design.md any more"
    missing = []
    for source, reference in references:
        main, _, sub = (part.strip().lower() for part in reference.partition(":"))
        names = [main] if main in sections else main.split(" and ")
        if not all(name in sections for name in names) or (sub and sub not in subsections):
            missing.append(f"{source}: {reference}")
    assert not missing, f"docs/design.md lacks the sections these point at: {missing}"


def _imports(tree: ast.AST) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found += [(node.module, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize(
    "page",
    [p for p in PAGES if p.parent != REPO and "```python" in p.read_text()],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_the_docs_examples_compile_and_import_what_exists(page: Path) -> None:
    # The README's examples run (tests/test_readme.py); these are checked without a store.
    for number, block in enumerate(PYTHON_BLOCK.findall(page.read_text()), start=1):
        tree = ast.parse(block, filename=f"{page.name}, example {number}")
        for module, name in _imports(tree):
            imported = importlib.import_module(module)
            assert name is None or hasattr(imported, name), f"{page.name}: {module}.{name}"


def _linked(index: Path) -> set[Path]:
    return {
        (index.parent / target.partition("#")[0]).resolve()
        for target in LINK.findall(_prose(index.read_text()))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and target.partition("#")[0]
    }


@pytest.mark.parametrize(
    ("index", "pages"),
    [
        (DOCS / "README.md", [*DOCS.glob("*.md"), DOCS / "decisions", DOCS / "benchmarks"]),
        (DOCS / "decisions" / "README.md", list((DOCS / "decisions").glob("*.md"))),
        (DOCS / "benchmarks" / "README.md", list((DOCS / "benchmarks").glob("*.md"))),
    ],
    ids=["docs", "decisions", "benchmarks"],
)
def test_every_index_lists_every_page(index: Path, pages: list[Path]) -> None:
    linked = _linked(index)
    folders = {p.parent for p in linked if p.name == "README.md"}
    unlisted = [
        p.relative_to(REPO)
        for p in pages
        if p != index and p.resolve() not in linked and p.resolve() not in folders
    ]
    assert not unlisted, f"{index.relative_to(REPO)} doesn't link {unlisted}"


def test_decision_records_are_dated() -> None:
    for record in (DOCS / "decisions").glob("*.md"):
        if record.name != "README.md":
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md", record.name), record.name
            assert record.read_text().startswith(f"# {record.name[:10]} — "), record.name
