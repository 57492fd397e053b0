-- The temporal arm asks for memories whose date range overlaps the query's window. With
-- only a btree on event_time, that range condition bounds one side: "early 2024" read every
-- memory dated before May 2024, and at 100k memories the planner chose a sequential scan
-- of the whole table (direct query 86 ms p50). A GiST index on the range itself reads only
-- the overlapping rows (23 ms; benchmarks/recall_bench.py, temporal arm). Undated
-- memories never match a window, so they stay out of the index. The bank is filtered
-- after the index (a GiST column for it would need btree_gist, another extension).
CREATE INDEX memory_units_event_range ON memory_units
    USING gist (tstzrange(event_time, greatest(event_time, occurred_end), '[]'))
    WHERE event_time IS NOT NULL;
