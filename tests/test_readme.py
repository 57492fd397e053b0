"""The README's adapter examples run, and print what the README says they print."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_tools import MemoryEngine, Settings

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Adapters, the recall tool and MCP"


def python_blocks() -> list[str]:
    text = README.read_text()
    start = text.index(SECTION)
    section = text[start : text.index("\n## ", start + len(SECTION))]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.fixture
def readme_engine(
    engine: MemoryEngine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    # the examples' MemoryEngine() joins this session's embedded server
    monkeypatch.setenv("HINDSIGHT_API_DATA_DIR", str(settings.data_dir))
    engine.delete_bank("alice")
    yield
    engine.delete_bank("alice")


def test_the_adapter_examples_print_what_the_readme_shows(readme_engine: None) -> None:
    blocks = python_blocks()
    assert len(blocks) == 4
    namespace: dict[str, object] = {}
    try:
        for block in blocks:
            # a whole-line comment in an example is the output of the print before it
            expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, str(README), "exec"), namespace)
            assert [line.rstrip() for line in out.getvalue().splitlines()] == expected
    finally:
        engine = namespace.get("engine")
        if isinstance(engine, MemoryEngine):
            engine.close()
