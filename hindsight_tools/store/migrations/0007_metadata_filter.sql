-- Metadata filters (hindsight_tools/recall/arms/filters.py) need jsonb: its operators and a
-- GIN index. The json column stays what recall returns (key order and duplicate keys as
-- given); metadata_doc is its jsonb twin, kept by PostgreSQL itself. jsonb refuses some
-- text json keeps: the NUL character (\u0000) and unpaired UTF-16 surrogates (\ud800). For
-- such a memory the twin has U+FFFD in their place, so it is still stored and filterable by
-- its other fields (a filter can't name either character anyway); the plain cast is tried
-- first, so every other memory's twin is exact.
CREATE FUNCTION hindsight_metadata_doc(doc json) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN doc::jsonb;
EXCEPTION WHEN others THEN
    BEGIN
        RETURN regexp_replace(
            doc::text, '\\u(0000|d[89a-f][0-9a-f]{{2}})', '\\ufffd', 'gi')::jsonb;
    EXCEPTION WHEN others THEN
        RETURN NULL;
    END;
END
$$;
-- jsonb_path_ops: the smaller GIN opclass, enough for @> containment, which is how an
-- equality condition asks the index.
ALTER TABLE memory_units ADD COLUMN metadata_doc jsonb
    GENERATED ALWAYS AS (hindsight_metadata_doc(metadata)) STORED;
CREATE INDEX memory_units_metadata ON memory_units USING gin (metadata_doc jsonb_path_ops);
