-- A memory's keyword postings (one per distinct term: ~12 for a chat turn, ~100 for a
-- long message) and its entity mentions (one per name: ~3 and ~20) lose their foreign
-- keys, as its links did (0009). PostgreSQL checks a foreign key row by row, and on long
-- memories they cost a fifth of an import's time: 4 µs a posting and 13 µs a mention (its
-- two keys), against 10 µs to write either. The engine
-- keeps them whole itself, as it does links: every write to a bank runs under the bank's
-- lock; postings and mentions are only written for memories written in that transaction,
-- and mentions only of entities it read or wrote; forgetting a memory deletes its postings
-- and mentions first (to keep the bank's statistics and mention counts exact), and
-- forgetting a bank deletes them by bank. An entity goes only when no memory mentions it.
-- A recall reads every memory it found from memory_units, so a posting or mention left by
-- a delete made by hand in SQL is never returned, though it may take a candidate's place.
-- Token vectors (one row a memory) keep their foreign key.
DO $$
DECLARE
    found record;
BEGIN
    FOR found IN
        SELECT conrelid::regclass AS tab, conname FROM pg_constraint
        WHERE contype = 'f'
          AND conrelid IN ('memory_terms'::regclass, 'unit_entities'::regclass)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', found.tab, found.conname);
    END LOOP;
END
$$;
