"""The walkthroughs in notebooks/ run top to bottom (their cells assert what they show)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hindsight_tools import MemoryEngine, Settings

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = [
    "langchain_agent.ipynb",
    "langgraph_store_agent.ipynb",
    "llama_index_memory.ipynb",
    "llama_index_query_engine.ipynb",
]


def test_the_notebooks_are_all_tested() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(
    name: str, engine: MemoryEngine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the kernel inherits the environment: it joins this session's embedded server
    monkeypatch.setenv("HINDSIGHT_API_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # no migration warning from jupyter_core
    # nbformat ships no annotations for read()
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(o.output_type == "stream" for o in outputs)
