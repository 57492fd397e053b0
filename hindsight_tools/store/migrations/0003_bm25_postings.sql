-- Postings that answer a BM25 query on their own. Joining every posting of a common term
-- to memory_units (for fact_type and document length) cost ~10 ms per 1,000 postings: a
-- query with a frequent word in a 100k bank took 300-450 ms. With both values copied here
-- and covered by the primary key, untagged queries read the postings index only.
-- retain rewrites a memory's postings whenever it rewrites the memory, so copies stay true.
ALTER TABLE memory_terms
    ADD COLUMN fact_type  text,
    ADD COLUMN doc_length integer;

UPDATE memory_terms mt SET fact_type = m.fact_type, doc_length = m.search_length
FROM memory_units m
WHERE m.bank_id = mt.bank_id AND m.id = mt.unit_id;

ALTER TABLE memory_terms
    ALTER COLUMN fact_type SET NOT NULL,
    ALTER COLUMN doc_length SET NOT NULL,
    DROP CONSTRAINT memory_terms_pkey,
    ADD PRIMARY KEY (bank_id, term, unit_id) INCLUDE (tf, doc_length, fact_type);
