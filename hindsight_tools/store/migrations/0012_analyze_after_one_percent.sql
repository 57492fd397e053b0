-- Autovacuum analyses a table again once a tenth of its rows have changed (PostgreSQL's
-- default autovacuum_analyze_scale_factor, 0.1). In a store of a million memories that is
-- a hundred thousand memories written since the last ANALYZE, and a bank filled by retains
-- in between stays unknown to the planner: it plans for a bank of one row, and the keyword
-- arm's bounded form then sums the late terms once per candidate (seconds where it should
-- take milliseconds). The tables the arms plan from are analysed after a hundredth
-- instead. ANALYZE reads a sample of fixed size (30,000 rows at the default statistics
-- target), not the table, so a big table costs about what a mid-sized one does, and
-- autovacuum runs it in the background at most once a minute per table. Small tables
-- keep the fixed 50-row threshold. An import of 10,000 memories or more analyses these
-- tables itself (hindsight_tools/store/statistics.py).
ALTER TABLE memory_units SET (autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE memory_terms SET (autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE bank_terms SET (autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE memory_links SET (autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE unit_entities SET (autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE entities SET (autovacuum_analyze_scale_factor = 0.01);
