-- Metadata filters (hindsight_tools/recall/arms/filters.py) need jsonb: its operators and a
-- GIN index. The json column stays what recall returns (key order and duplicate keys as
-- given); this is its jsonb twin, kept by PostgreSQL itself. jsonb can't hold the NUL
-- character that json text may escape as \u0000: here it becomes U+FFFD, so a memory with
-- it is still stored (and filterable by its other fields; a filter can't name NUL anyway).
-- jsonb_path_ops: the smaller GIN opclass, enough for @> containment, which is how an
-- equality condition asks the index.
ALTER TABLE memory_units ADD COLUMN metadata_doc jsonb
    GENERATED ALWAYS AS (replace(metadata::text, '\u0000', '\ufffd')::jsonb) STORED;
CREATE INDEX memory_units_metadata ON memory_units USING gin (metadata_doc jsonb_path_ops);
