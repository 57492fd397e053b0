"""Every Python example of the README runs, and prints what the README says it prints.

The examples run in order, in one namespace (a later one uses the engine and bank of the
quick start), against the embedded server of the test run. In an example, a whole line
starting with ``# `` is the output expected of the prints before it.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_tools import MemoryEngine, Settings

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\S*)[ \t]*$", flags=re.MULTILINE)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
BANKS = ("alice",)


def python_blocks() -> list[str]:
    return PYTHON_BLOCK.findall(README.read_text())


def expected_output(block: str) -> list[str]:
    return [line[2:] for line in block.splitlines() if line.startswith("# ")]


def test_every_python_example_is_a_block_that_runs() -> None:
    # An example fenced as ```py, ```python3 or ```pycon would be skipped by the test below.
    infos = FENCE.findall(README.read_text())
    openers = infos[0::2]  # fences alternate: opener (with its language), closer
    assert all(closer == "" for closer in infos[1::2]), "a fence is left open"
    pythonish = [info for info in openers if info.lower().startswith("py")]
    assert pythonish == ["python"] * len(pythonish), pythonish
    assert len(python_blocks()) == len(pythonish) > 0


@pytest.fixture
def readme_engine(
    engine: MemoryEngine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    # the examples' MemoryEngine() and AsyncMemoryEngine() join the test run's server
    monkeypatch.setenv("HINDSIGHT_API_DATA_DIR", str(settings.data_dir))
    for bank in BANKS:
        engine.delete_bank(bank)
    yield
    for bank in BANKS:
        engine.delete_bank(bank)


def test_the_readme_examples_print_what_the_readme_shows(readme_engine: None) -> None:
    blocks = python_blocks()
    namespace: dict[str, object] = {"__name__": "readme"}
    executed = 0
    try:
        for number, block in enumerate(blocks, start=1):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, f"{README}, example {number}", "exec"), namespace)
            printed = [line.rstrip() for line in out.getvalue().splitlines()]
            assert printed == expected_output(block), f"example {number}"
            executed += 1
    finally:
        for value in namespace.values():
            if isinstance(value, MemoryEngine):
                value.close()
    assert executed == len(blocks) == README.read_text().count("```python\n")
