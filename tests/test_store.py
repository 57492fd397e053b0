"""Extensions, migrations and the external-URL path."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql

from hindsight_tools import (
    MemoryEngine,
    MissingExtensionError,
    SchemaMismatchError,
    Settings,
    StoreError,
)
from hindsight_tools.encoders.embedding import Vectors, canonical_model_name
from hindsight_tools.settings import DEFAULT_EMBEDDINGS_MODEL
from hindsight_tools.store.bootstrap import MIGRATIONS, bootstrap
from hindsight_tools.store.statistics import ANALYZED_TABLES


def test_migrations_apply_once(scratch_db: str) -> None:
    assert bootstrap(scratch_db, 384) == [version for version, _ in MIGRATIONS]
    assert bootstrap(scratch_db, 384) == []
    with psycopg.connect(scratch_db) as conn:
        versions = conn.execute("SELECT version FROM hindsight_schema_version").fetchall()
        assert versions == [(v,) for v, _ in MIGRATIONS]
        extensions = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        assert {"vector", "pg_trgm"} <= extensions


def test_autovacuum_analyses_the_planned_tables_after_a_hundredth(scratch_db: str) -> None:
    # PostgreSQL's default waits for a tenth of a table to change; a bank retained in a big
    # store would stay unknown to the planner for a hundred thousand memories
    bootstrap(scratch_db, 384)
    with psycopg.connect(scratch_db) as conn:
        options: dict[str, list[str] | None] = dict(
            conn.execute(
                "SELECT relname, reloptions FROM pg_class WHERE relname = ANY(%s) "
                "AND relkind IN ('r', 'p')",
                (list(ANALYZED_TABLES),),
            ).fetchall()
        )
        assert set(options) == set(ANALYZED_TABLES)
        for table, given in options.items():
            assert "autovacuum_analyze_scale_factor=0.01" in (given or []), table
        # the rest keep the server's own setting
        assert conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'hindsight_schema_version'"
        ).fetchone() == (None,)


def test_a_store_a_newer_version_migrated_is_refused(scratch_db: str) -> None:
    bootstrap(scratch_db, 384)
    newer = MIGRATIONS[-1][0] + 1
    with psycopg.connect(scratch_db) as conn:
        conn.execute(
            "INSERT INTO hindsight_schema_version (version, name) VALUES (%s, 'later.sql')",
            (newer,),
        )
    with pytest.raises(SchemaMismatchError, match=rf"\[{newer}\].*Upgrade hindsight-tools"):
        bootstrap(scratch_db, 384)


def test_vector_dimension_follows_the_model(scratch_db: str) -> None:
    bootstrap(scratch_db, 8)
    with psycopg.connect(scratch_db) as conn:
        row = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'memory_units'::regclass AND attname = 'embedding'"
        ).fetchone()
    assert row == ("vector(8)",)
    with pytest.raises(SchemaMismatchError, match="8-dimensional .* 384-dimensional"):
        bootstrap(scratch_db, 384)


def test_the_store_refuses_a_model_other_than_the_one_that_wrote_it(scratch_db: str) -> None:
    bootstrap(scratch_db, 8)  # a store from before the record: the first model takes it
    bootstrap(scratch_db, 8, "team/model-a")
    bootstrap(scratch_db, 8, "team/model-a")
    with pytest.raises(SchemaMismatchError) as caught:
        bootstrap(scratch_db, 8, "team/model-b")  # same dimension: only the record tells
    message = str(caught.value)
    assert "'team/model-a'" in message and "'team/model-b'" in message
    assert "HINDSIGHT_API_EMBEDDINGS_MODEL=team/model-a" in message
    with psycopg.connect(scratch_db) as conn:
        row = conn.execute("SELECT value FROM hindsight_meta WHERE key = 'embedding_model'")
        assert row.fetchone() == ("team/model-a",)


def test_the_default_models_two_spellings_are_one_model(scratch_db: str) -> None:
    bootstrap(scratch_db, 384, canonical_model_name("all-MiniLM-L6-v2"))
    bootstrap(scratch_db, 384, canonical_model_name(DEFAULT_EMBEDDINGS_MODEL))
    with pytest.raises(SchemaMismatchError):
        bootstrap(scratch_db, 384, canonical_model_name("BAAI/bge-small-en-v1.5"))


def test_missing_extension_is_named(engine: MemoryEngine, scratch_db: str) -> None:
    role = f"plain_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(engine.database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    try:
        params = psycopg.conninfo.conninfo_to_dict(scratch_db)
        params["user"] = role
        url = psycopg.conninfo.make_conninfo(**params)  # type: ignore[arg-type]
        with pytest.raises(MissingExtensionError, match="'vector'.*pgvector"):
            bootstrap(url, 384)
    finally:
        with psycopg.connect(engine.database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


class TinyEmbedder:
    """A deterministic 8-d embedder: the engine takes any object with this shape."""

    name = "tiny"
    dimension = 8

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [np.frombuffer(t.encode().ljust(8, b"\x01")[:8], dtype=np.uint8) for t in texts]
        vectors = np.asarray(rows, dtype=np.float32) + 1.0
        normalised: Vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return normalised


def test_external_url_with_a_custom_embedder(settings: Settings, scratch_db: str) -> None:
    with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
        assert engine.database_url == scratch_db
        engine.retain("ext", [{"id": "x", "text": "hello"}])
        assert [m.id for m in engine.recall("ext", "hello").memories] == ["x"]


class OtherTinyEmbedder(TinyEmbedder):
    """Same dimension as :class:`TinyEmbedder`, another model."""

    name = "tiny-2"


def test_an_engine_on_another_model_is_refused_and_the_memories_stay(
    settings: Settings, scratch_db: str
) -> None:
    with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
        engine.retain("ext", [{"id": "x", "text": "hello"}])
    with pytest.raises(SchemaMismatchError, match="'tiny' but the configured model is 'tiny-2'"):
        MemoryEngine(scratch_db, settings=settings, embedder=OtherTinyEmbedder())
    with MemoryEngine(scratch_db, settings=settings, embedder=TinyEmbedder()) as engine:
        assert [m.id for m in engine.recall("ext", "hello").memories] == ["x"]


def test_external_url_from_the_environment(
    engine: MemoryEngine, bank: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_API_DATABASE_URL", engine.database_url)
    monkeypatch.setenv("HINDSIGHT_API_DATA_DIR", "/nonexistent/never/used")
    with MemoryEngine() as other:
        assert other.database_url == engine.database_url
        other.retain(bank, [{"id": "shared", "text": "Seen from both engines"}])
    assert [m.id for m in engine.recall(bank, "Seen from both engines").memories] == ["shared"]


def test_closed_engine_refuses_calls(settings: Settings, engine: MemoryEngine) -> None:
    other = MemoryEngine(engine.database_url, settings=settings)
    other.close()
    other.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        other.recall("b", "q")


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_API_EMBEDDINGS_MODEL", "/models/mine")
    monkeypatch.setenv("HINDSIGHT_API_RECALL_BUDGET_FUNCTION", "adaptive")
    monkeypatch.setenv("HINDSIGHT_API_RETAIN_MAX_TEXT_CHARS", "99")
    s = Settings()
    assert (s.embeddings_model, s.recall_budget_function, s.retain_max_text_chars) == (
        "/models/mine",
        "adaptive",
        99,
    )
    monkeypatch.setenv("HINDSIGHT_API_RECALL_BUDGET_FUNCTION", "random")
    with pytest.raises(ValueError, match="fixed.*adaptive"):
        Settings()


def test_a_pool_connection_knows_vectors(engine: MemoryEngine) -> None:
    with engine._pool.connection() as conn:
        value: Any = conn.execute("SELECT '[1,2,3]'::vector").fetchone()
    assert value is not None and value[0].to_list() == [1.0, 2.0, 3.0]


def test_an_exhausted_pool_times_out_with_a_clear_error(
    settings: Settings, engine: MemoryEngine
) -> None:
    tight = settings.model_copy(
        update={"pool_min_size": 1, "pool_max_size": 1, "pool_timeout": 0.3}
    )
    with MemoryEngine(engine.database_url, settings=tight) as small:
        with (
            small._pool.connection(),
            pytest.raises(StoreError, match="no database connection became free within 0.3 s"),
        ):
            small.delete_bank("anything")
        assert small.delete_bank("anything") is False  # usable again once a connection frees
