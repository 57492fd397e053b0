"""The reference Hindsight server (``hindsight-api-slim``), run from its own virtualenv.

It cannot share ours (it pins other versions of the same libraries), so it runs as its own
process and is spoken to over its HTTP API, as its users do. It is set up to need no LLM:
``LLM_PROVIDER=none`` (which makes its retain store each item as given, its ``chunks``
extraction mode, instead of extracting facts with an LLM), local embeddings from the same
packaged all-MiniLM-L6-v2 folder hindsight-tools loads. Its reranker is one of
:class:`ServerReranker`: ``rrf`` (its passthrough) or its in-process ``onnx`` cross-encoder
given the very model file hindsight-tools' cross-encoder runs, so the two rerank
model-for-model. (Its default, ``local``, is a sentence-transformers model fetched from the
Hugging Face hub, which an offline machine cannot load.) Each configuration uses its own
database on the shared embedded PostgreSQL server (its tables have the same names as ours).
Latency therefore includes a loopback HTTP round trip (about a millisecond).

Its virtualenv needs the ``local-ml`` extra (the sentence-transformers embedder) and
``local-onnx`` (onnxruntime and transformers, for the ``onnx`` reranker); torch pinned first,
so pip takes the machine's CPU build rather than a multi-GB CUDA one::

    python3 -m venv /tmp/hs-venv
    /tmp/hs-venv/bin/pip install torch==2.13.0 'hindsight-api-slim[local-ml,local-onnx]==1.1.0'
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from benchmarks.peers import DiaIds, Memory
from hindsight_tools.encoders.embedding import resolve_model_path

RETAIN_BATCH = 100
START_TIMEOUT = 180.0
# hindsight-api-slim's DEFAULT_RERANKER_MAX_CANDIDATES: the fused candidates it reranks
DEFAULT_MAX_CANDIDATES = 300
# hindsight-tools reads the same prefix; none of our settings may configure the server
SETTINGS_PREFIX = "HINDSIGHT_API_"
# Its `hindsight-api` entry point, with transformers' AutoTokenizer imported first. Its startup
# loads the embedder and the onnx reranker in two threads at once, and transformers 5's lazy
# module then fails one of them ("cannot import name 'AutoTokenizer'"; upstream closed the
# same race only for its jina-mlx reranker). hindsight_api goes first: its import caps the
# native thread pools before numpy and friends load.
LAUNCH = (
    "import sys, hindsight_api; from transformers import AutoTokenizer; "
    "from hindsight_api.main import main; sys.argv[0] = 'hindsight-api'; sys.exit(main())"
)


@dataclass(frozen=True)
class ServerReranker:
    """How the server orders its fused candidates: its settings, and the words for the report.

    ``key`` names the configuration's database and log; ``expect_in_log`` is a line its
    startup log must contain, so a setting the server ignored fails the run instead of
    silently benchmarking another configuration."""

    key: str
    label: str
    description: str
    env: Mapping[str, str] = field(default_factory=dict)
    expect_in_log: str | None = None


RRF = ServerReranker(
    key="rrf",
    label="rrf",
    description="`RERANKER_PROVIDER=rrf` (its passthrough: the fused order, no model)",
    env={"HINDSIGHT_API_RERANKER_PROVIDER": "rrf"},
)


def onnx_cross_encoder(model_dir: Path, max_candidates: int, source: str) -> ServerReranker:
    """Its ``onnx`` provider on ``model_dir/model.onnx``, reranking the top ``max_candidates``
    fused candidates; ``source`` says in the report where that file comes from."""
    model = model_dir / "model.onnx"
    if not model.is_file() or not (model_dir / "tokenizer.json").is_file():
        raise FileNotFoundError(f"{model_dir} needs model.onnx and tokenizer.json")
    default = " (its default)" if max_candidates == DEFAULT_MAX_CANDIDATES else ""
    return ServerReranker(
        key=f"onnx{max_candidates}",
        label=f"cross-encoder, {max_candidates}",
        description=(
            f"`RERANKER_PROVIDER=onnx` on {source}, tokenizer from the same folder; "
            f"`RERANKER_MAX_CANDIDATES={max_candidates}`{default}: its top {max_candidates} "
            "fused candidates are scored"
        ),
        env={
            "HINDSIGHT_API_RERANKER_PROVIDER": "onnx",
            "HINDSIGHT_API_RERANKER_ONNX_MODEL_PATH": str(model),
            # without it the provider loads the tokenizer of its default model id, from the hub
            "HINDSIGHT_API_RERANKER_ONNX_TOKENIZER_NAME_OR_PATH": str(model_dir),
            "HINDSIGHT_API_RERANKER_MAX_CANDIDATES": str(max_candidates),
        },
        expect_in_log=f"initializing ONNX provider with {model}",
    )


def server_env(
    base: Mapping[str, str],
    *,
    database_url: str,
    port: int,
    embeddings_model: str,
    reranker: ServerReranker,
) -> dict[str, str]:
    """The server process's environment: ``base`` without any ``HINDSIGHT_API_*`` setting
    (those are hindsight-tools' own), then the benchmark's configuration."""
    env = {name: value for name, value in base.items() if not name.startswith(SETTINGS_PREFIX)}
    env.update(
        {
            "HINDSIGHT_API_DATABASE_URL": database_url,
            "HINDSIGHT_API_LLM_PROVIDER": "none",
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "local",
            "HINDSIGHT_API_EMBEDDINGS_LOCAL_MODEL": embeddings_model,
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_API_PORT": str(port),
            "HINDSIGHT_API_WORKER_ID": "benchmark",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **reranker.env,
        }
    )
    return env


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
    def __init__(
        self, conninfo: str, venv: Path, model: str, log: Path, reranker: ServerReranker = RRF
    ) -> None:
        self.name = f"Hindsight API ({reranker.label})"
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
            f"item verbatim: its `chunks` mode), {reranker.description}; local embeddings from "
            "the same model folder, budget mid; its own database on the same server."
        )
        database = f"hindsight_api_{reranker.key}"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(database)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        with psycopg.connect(_database_uri(conninfo, database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        port = _free_port()
        env = server_env(
            os.environ,
            database_url=_database_uri(conninfo, database),
            port=port,
            embeddings_model=resolve_model_path(model),
            reranker=reranker,
        )
        self._log = log.open("w")
        self._process = subprocess.Popen(
            [str(venv / "bin" / "python"), "-c", LAUNCH],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
        self._wait_until_healthy(log)
        if reranker.expect_in_log is not None and reranker.expect_in_log not in log.read_text():
            self.close()
            raise RuntimeError(
                f"hindsight-api started without the configured reranker: its log {log} lacks "
                f"{reranker.expect_in_log!r}"
            )

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
        cause = last_error(log.read_text(errors="replace"))
        raise RuntimeError(
            f"hindsight-api did not become healthy{f' ({cause})' if cause else ''}; "
            f"its log is {log}"
        )

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


def last_error(log: str) -> str | None:
    """The last exception line of a server log ("ImportError: …"), without the traceback's
    group markers; None if it has none."""
    found = re.findall(r"^[\s|+-]*(\w*(?:Error|Exception): .+)$", log, flags=re.MULTILINE)
    return found[-1].strip() if found else None


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
