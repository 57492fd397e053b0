"""The reference Hindsight server (``hindsight-api-slim``), run from its own virtualenv.

It cannot share ours (it pins other versions of the same libraries), so it runs as its own
process and is spoken to over its HTTP API, as its users do. It is set up to need no LLM:
``LLM_PROVIDER=none`` (which makes its retain store each item as given, its ``chunks``
extraction mode, instead of extracting facts with an LLM), reranker ``rrf`` (its passthrough),
local embeddings from the same packaged all-MiniLM-L6-v2 folder hindsight-tools loads. It uses
its own database on the shared embedded PostgreSQL server (its tables have the same names as
ours). Latency therefore includes a loopback HTTP round trip (about a millisecond).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from benchmarks.peers import DiaIds, Memory
from hindsight_tools.embedding import resolve_model_path

DATABASE = "hindsight_api"
RETAIN_BATCH = 100
START_TIMEOUT = 180.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _database_uri(conninfo: str, database: str) -> str:
    # the embedded server's URI names the database between "/" and "?": …@/postgres?host=…
    head, _, tail = conninfo.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{database}" + (f"?{tail}" if tail else "")


class HindsightApiSystem:
    name = "Hindsight API (reference)"

    def __init__(self, conninfo: str, venv: Path, model: str, log: Path) -> None:
        executable = venv / "bin" / "hindsight-api"
        if not executable.exists():
            raise FileNotFoundError(f"{executable} not found: install hindsight-api-slim there")
        version = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "show", "hindsight-api-slim"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        release = next(
            (
                line.split(":", 1)[1].strip()
                for line in version.splitlines()
                if line.startswith("Version")
            ),
            "?",
        )
        self.description = (
            f"`hindsight-api-slim` {release} over HTTP, `LLM_PROVIDER=none` (retain stores each "
            "item verbatim: its `chunks` mode), `RERANKER_PROVIDER=rrf`, local embeddings from "
            "the same model folder, budget mid; its own database on the same server."
        )
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(DATABASE)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        with psycopg.connect(_database_uri(conninfo, DATABASE), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        port = _free_port()
        env = {
            **os.environ,
            "HINDSIGHT_API_DATABASE_URL": _database_uri(conninfo, DATABASE),
            "HINDSIGHT_API_LLM_PROVIDER": "none",
            "HINDSIGHT_API_RERANKER_PROVIDER": "rrf",
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "local",
            "HINDSIGHT_API_EMBEDDINGS_LOCAL_MODEL": resolve_model_path(model),
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_API_PORT": str(port),
            "HINDSIGHT_API_WORKER_ID": "benchmark",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        self._log = log.open("w")
        self._process = subprocess.Popen(
            [str(executable)], env=env, stdout=self._log, stderr=subprocess.STDOUT
        )
        self._client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
        self._wait_until_healthy(log)

    def _wait_until_healthy(self, log: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            try:
                if self._client.get("/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(1)
        self.close()
        raise RuntimeError(f"hindsight-api did not become healthy; its log is {log}")

    def retain(self, bank: str, items: Sequence[dict[str, Any]]) -> None:
        self._client.delete(f"/v1/default/banks/{bank}/memories")
        for start in range(0, len(items), RETAIN_BATCH):
            batch = items[start : start + RETAIN_BATCH]
            payload = [_payload(item) for item in batch]
            response = self._client.post(
                f"/v1/default/banks/{bank}/memories", json={"items": payload, "async": False}
            )
            response.raise_for_status()

    def recall(self, bank: str, query: str, k: int, *, query_time: str | None) -> DiaIds:
        body: dict[str, Any] = {"query": query, "budget": "mid", "max_tokens": 100_000}
        if query_time is not None:
            body["query_timestamp"] = query_time
        response = self._client.post(f"/v1/default/banks/{bank}/memories/recall", json=body)
        response.raise_for_status()
        return [
            dia_id
            if isinstance(dia_id := (found.get("metadata") or {}).get("dia_id"), str)
            else None
            for found in response.json()["results"][:k]
        ]

    def close(self) -> None:
        self._client.close()
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()


def _payload(item: dict[str, Any]) -> dict[str, Any]:
    memory = Memory.from_item(item)
    payload: dict[str, Any] = {
        "content": memory.text,
        # one document per memory: its retain replaces a document's earlier memories
        "document_id": memory.id,
        "metadata": {} if memory.dia_id is None else {"dia_id": memory.dia_id},
    }
    if item.get("occurred_start"):
        payload["timestamp"] = str(item["occurred_start"])
    return payload
