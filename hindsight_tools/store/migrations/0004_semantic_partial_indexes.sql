-- One HNSW graph per fact type for the semantic arm, which asks each type for its own top
-- k. On the global index every such search also walked (and fetched from the heap) the
-- rows of the other two types before discarding them; at 100k memories the arm took
-- 150 ms with the global index and 85 ms with these (benchmarks/recall_bench.py). The
-- global index stays for searches across types (graph seeds, semantic links at retain).
-- The parameters are the global index's; building them on a large existing store takes a
-- while (about a minute per 50k memories on 2 cores), once.
SET LOCAL maintenance_work_mem = '512MB';
CREATE INDEX memory_units_embedding_world ON memory_units
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE fact_type = 'world';
CREATE INDEX memory_units_embedding_experience ON memory_units
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE fact_type = 'experience';
CREATE INDEX memory_units_embedding_observation ON memory_units
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE fact_type = 'observation';
