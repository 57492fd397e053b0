"""The four distributions as a user gets them: wheels built from a clean copy of the
sources, checked by twine, installed with the default dependencies (no extra) into a fresh
virtualenv outside the repository, then used from a folder outside it too: the embedded
PostgreSQL starts, two memories are retained and the right one is recalled first, and
each adapter's README example runs. Slow (pip installs torch and the rest); no mocks."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import hindsight_tools

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = sorted(path.parent for path in (ROOT / "adapters").glob("*/pyproject.toml"))
# not part of any distribution, and large or in use by other processes
SKIP = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
SKIP_PATTERNS = ("*.egg-info", "build", "dist", "results")
MIGRATIONS = sorted(p.name for p in (ROOT / "hindsight_tools/store/migrations").glob("*.sql"))
DATA = sorted(p.name for p in (ROOT / "hindsight_tools/data").glob("*.jsonl"))
# the modules of the optional parts: none comes with the default install
OPTIONAL = ("cohere", "mcp", "onnx")

# Runs in the fresh virtualenv, in a folder outside the repository. argv[1]: a JSON file of
# the adapters' README examples. Prints one JSON object for the test to check.
SCRIPT = r"""
import importlib.metadata
import importlib.resources
import importlib.util
import json
import sys

import hindsight_tools
from hindsight_tools import MemoryEngine, RerankerError, Settings
from hindsight_tools.recall.rerank.providers import load_reranker

out = {
    "file": hindsight_tools.__file__,
    "version": hindsight_tools.__version__,
    "distribution_version": importlib.metadata.version("hindsight-tools"),
    "absent": sorted(n for n in sys.argv[2:] if importlib.util.find_spec(n) is None),
}
package = importlib.resources.files("hindsight_tools")
out["migrations"] = sorted(
    p.name for p in (package / "store" / "migrations").iterdir() if p.name.endswith(".sql")
)
out["data"] = sorted(p.name for p in (package / "data").iterdir() if p.name.endswith(".jsonl"))
out["py_typed"] = (package / "py.typed").is_file()

with MemoryEngine() as engine:
    engine.retain(
        "wheel",
        [
            {"id": "job", "text": "Alice joined Google as a software engineer in March 2023"},
            {"id": "pet", "text": "Bob adopted a grey cat called Miso last winter"},
        ],
    )
    out["recalled"] = [m.id for m in engine.recall("wheel", "Where does Alice work?").memories]
    # the adapters' README examples, while this engine keeps the embedded server up
    out["readmes"] = {}
    for name, blocks in json.load(open(sys.argv[1])).items():
        namespace = {}
        for block in blocks:
            exec(compile(block, f"{name}/README.md", "exec"), namespace)
        out["readmes"][name] = sorted(k for k in namespace if not k.startswith("__"))

try:
    load_reranker("cohere", Settings(reranker_cohere_api_key="k"))
except RerankerError as exc:
    out["cohere_error"] = str(exc)
print("RESULT " + json.dumps(out))
"""


def run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Runs a command to its end; its output goes into the assertion message if it fails."""
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=1800
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def torch_requirement() -> str:
    """The CPU torch pin of the Makefile: installed first, from the local wheel."""
    found = re.search(r"pip install --quiet (torch==\S+)", (ROOT / "Makefile").read_text())
    assert found, "the Makefile installs no pinned torch"
    return found.group(1)


def python_blocks(readme: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.DOTALL)


@pytest.fixture
def workdir() -> Iterator[Path]:
    # short and under /tmp: the embedded server's socket lives in its data folder, and as
    # root every parent of that folder is opened to the server's system user
    path = Path(tempfile.mkdtemp(prefix="htw-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def build_wheels(sources: Path, dist: Path) -> dict[str, Path]:
    """Wheel per distribution, built from a copy of the tree (setuptools writes build/ and
    *.egg-info next to the sources, and a stale build/ would end up in the wheel)."""
    ignore = shutil.ignore_patterns(*SKIP, *SKIP_PATTERNS)
    shutil.copytree(ROOT, sources, ignore=ignore, symlinks=True)
    wheels: dict[str, Path] = {}
    for folder in [sources, *(sources / "adapters" / a.name for a in ADAPTERS)]:
        before = set(dist.glob("*.whl"))
        run(sys.executable, "-m", "build", "--wheel", "--outdir", dist, folder)
        (wheel,) = set(dist.glob("*.whl")) - before
        wheels["core" if folder == sources else folder.name] = wheel
    return wheels


def check_wheel(name: str, wheel: Path) -> None:
    license_text = (ROOT / "LICENSE").read_bytes()
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = email.message_from_bytes(archive.read(metadata))
        licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(licenses) == 1, f"{name}: no LICENSE in {wheel.name}"
        assert archive.read(licenses[0]) == license_text
        assert fields["License-Expression"] == "Apache-2.0"
        requires = [Requirement(line) for line in fields.get_all("Requires-Dist") or []]
        pinned = [str(r) for r in requires if any(s.operator == "==" for s in r.specifier)]
        assert pinned == [], f"{name} pins {pinned}"
        if name == "core":
            assert fields["Version"] == hindsight_tools.__version__
            assert "hindsight_tools/py.typed" in names
            for file in MIGRATIONS:
                assert f"hindsight_tools/store/migrations/{file}" in names
            for file in DATA:
                assert f"hindsight_tools/data/{file}" in names
        else:
            (core,) = [r for r in requires if r.name == "hindsight-tools"]
            assert core.specifier.contains(hindsight_tools.__version__) and "<" in str(core)


def test_the_wheels_install_and_work_outside_the_repository(workdir: Path) -> None:
    dist = workdir / "dist"
    wheels = build_wheels(workdir / "src", dist)
    assert sorted(wheels) == sorted(["core", *(a.name for a in ADAPTERS)])
    for name, wheel in wheels.items():
        check_wheel(name, wheel)
    run(sys.executable, "-m", "twine", "check", "--strict", *wheels.values())

    venv = workdir / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # --no-compile: the virtualenv is used once, its .pyc files are not worth writing
    pip = (python, "-m", "pip", "install", "--quiet", "--no-compile")
    run(*pip, torch_requirement(), env=env)
    run(*pip, "-c", ROOT / "constraints.txt", *wheels.values(), env=env)
    run(python, "-m", "pip", "check", env=env)

    outside = workdir / "work"
    outside.mkdir()
    readmes = {a.name: python_blocks(a / "README.md") for a in ADAPTERS}
    (outside / "readmes.json").write_text(json.dumps(readmes))
    (outside / "use.py").write_text(SCRIPT)
    data_dir = workdir / "data"
    env |= {
        "HINDSIGHT_API_DATA_DIR": str(data_dir),
        "HINDSIGHT_API_EMBEDDINGS_ONNX_CACHE_DIR": str(workdir / "onnx"),
    }
    # -I: neither the environment nor the working folder adds anything to sys.path
    output = run(python, "-I", "use.py", "readmes.json", *OPTIONAL, cwd=outside, env=env)
    (line,) = [line for line in output.splitlines() if line.startswith("RESULT ")]
    result = json.loads(line.removeprefix("RESULT "))

    assert Path(result["file"]).is_relative_to(venv), result["file"]
    assert result["version"] == result["distribution_version"] == hindsight_tools.__version__
    assert result["migrations"] == MIGRATIONS and result["data"] == DATA and result["py_typed"]
    assert result["recalled"][0] == "job", result["recalled"]
    assert set(result["readmes"]) == {a.name for a in ADAPTERS}
    assert all(result["readmes"].values())  # each example defined its names
    # the default install has no extra, and each missing one says how to get it
    assert result["absent"] == sorted(OPTIONAL)
    assert "pip install 'hindsight-tools[cohere]'" in result["cohere_error"]
    mcp = subprocess.run(
        [venv / "bin" / "hindsight-tools", "mcp", "--bank", "alice"],
        capture_output=True,
        text=True,
        cwd=outside,
        env=env,
        timeout=300,
    )
    assert mcp.returncode == 2 and "pip install 'hindsight-tools[mcp]'" in mcp.stderr
