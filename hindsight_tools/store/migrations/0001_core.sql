-- Core tables (docs/design.md, Store). {dimension} is the embedding model's vector size.
CREATE TABLE banks (
    bank_id    text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    config     jsonb NOT NULL DEFAULT '{{}}'
);

CREATE TABLE documents (
    bank_id     text NOT NULL REFERENCES banks ON DELETE CASCADE,
    document_id text NOT NULL,
    text        text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    tags        text[] NOT NULL DEFAULT '{{}}',
    PRIMARY KEY (bank_id, document_id)
);

-- chunk_id is a digest of (document_id, chunk_text): the same source text is stored once.
CREATE TABLE chunks (
    bank_id     text NOT NULL,
    chunk_id    text NOT NULL,
    document_id text NOT NULL,
    chunk_index integer NOT NULL,
    chunk_text  text NOT NULL,
    PRIMARY KEY (bank_id, chunk_id),
    UNIQUE (bank_id, document_id, chunk_index),
    FOREIGN KEY (bank_id, document_id) REFERENCES documents ON DELETE CASCADE
);

CREATE TABLE memory_units (
    bank_id        text NOT NULL REFERENCES banks ON DELETE CASCADE,
    id             text NOT NULL,
    text           text NOT NULL,
    context        text,
    fact_type      text NOT NULL CHECK (fact_type IN ('world', 'experience', 'observation')),
    embedding      vector({dimension}) NOT NULL,
    occurred_start timestamptz,
    occurred_end   timestamptz,
    mentioned_at   timestamptz,
    -- the one date a memory is placed at in time: when it happened, else when it was said
    event_time     timestamptz GENERATED ALWAYS AS (coalesce(occurred_start, mentioned_at)) STORED,
    tags           text[] NOT NULL DEFAULT '{{}}',
    proof_count    integer NOT NULL DEFAULT 1 CHECK (proof_count >= 1),
    document_id    text,
    chunk_id       text,
    -- json, not jsonb: metadata comes back exactly as stored (key order, NUL escapes)
    metadata       json NOT NULL DEFAULT '{{}}',
    search_vector  tsvector NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bank_id, id),
    FOREIGN KEY (bank_id, document_id) REFERENCES documents ON DELETE SET NULL (document_id),
    FOREIGN KEY (bank_id, chunk_id) REFERENCES chunks ON DELETE SET NULL (chunk_id)
);

-- Keep embeddings in the row: out-of-line (TOAST) storage made every distance computation
-- fetch the vector from the TOAST table, several buffer reads per comparison.
ALTER TABLE memory_units ALTER COLUMN embedding SET STORAGE MAIN;

CREATE INDEX memory_units_embedding_hnsw ON memory_units
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX memory_units_search ON memory_units USING gin (search_vector);
CREATE INDEX memory_units_tags ON memory_units USING gin (tags);
CREATE INDEX memory_units_bank_type_time ON memory_units (bank_id, fact_type, event_time);
CREATE INDEX memory_units_bank_time ON memory_units (bank_id, event_time);
CREATE INDEX memory_units_document ON memory_units (bank_id, document_id);

CREATE TABLE entities (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bank_id        text NOT NULL REFERENCES banks ON DELETE CASCADE,
    canonical_name text NOT NULL,
    name_key       text NOT NULL,
    mention_count  integer NOT NULL DEFAULT 0,
    UNIQUE (bank_id, name_key)
);
CREATE INDEX entities_name_trgm ON entities USING gin (canonical_name gin_trgm_ops);

CREATE TABLE unit_entities (
    bank_id   text NOT NULL,
    unit_id   text NOT NULL,
    entity_id bigint NOT NULL REFERENCES entities ON DELETE CASCADE,
    PRIMARY KEY (bank_id, unit_id, entity_id),
    FOREIGN KEY (bank_id, unit_id) REFERENCES memory_units ON DELETE CASCADE
);
CREATE INDEX unit_entities_entity ON unit_entities (entity_id, unit_id);

CREATE TABLE memory_links (
    bank_id      text NOT NULL,
    from_unit_id text NOT NULL,
    to_unit_id   text NOT NULL,
    link_type    text NOT NULL
        CHECK (link_type IN ('semantic', 'temporal', 'causes', 'caused_by', 'enables', 'prevents')),
    weight       real NOT NULL CHECK (weight >= 0 AND weight <= 1),
    PRIMARY KEY (bank_id, from_unit_id, to_unit_id, link_type),
    FOREIGN KEY (bank_id, from_unit_id) REFERENCES memory_units ON DELETE CASCADE,
    FOREIGN KEY (bank_id, to_unit_id) REFERENCES memory_units ON DELETE CASCADE
);
CREATE INDEX memory_links_from ON memory_links (bank_id, from_unit_id, link_type, weight DESC);
CREATE INDEX memory_links_to ON memory_links (bank_id, to_unit_id, link_type, weight DESC);
