-- The temporal arm asks for memories whose date range overlaps the query's window. With
-- only a btree on event_time, that range condition bounds one side: "early 2024" read every
-- memory dated before May 2024, and at 100k memories the planner chose a sequential scan
-- of the whole table (direct query 86 ms p50). A GiST index on the range itself reads only
-- the overlapping rows (23 ms; benchmarks/recall_bench.py, temporal arm). A memory's
-- range is the one docs/design.md (The four arms) gives: occurred_start..occurred_end when it has either, else the instant
-- mentioned_at; least/greatest keep a hand-inserted reversed pair from failing the build.
-- Undated memories never match a window, so they stay out of the index. The bank is filtered
-- after the index (a GiST column for it would need btree_gist, another extension).
CREATE INDEX memory_units_event_range ON memory_units
    USING gist (tstzrange(
        least(coalesce(occurred_start, occurred_end, mentioned_at),
              coalesce(occurred_end, occurred_start, mentioned_at)),
        greatest(coalesce(occurred_start, occurred_end, mentioned_at),
                 coalesce(occurred_end, occurred_start, mentioned_at)),
        '[]'))
    WHERE coalesce(occurred_start, occurred_end, mentioned_at) IS NOT NULL;
