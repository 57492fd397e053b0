-- Links are the store's largest table: about 56 rows a memory in the import benchmark's
-- bank of 20,000. Each row's two foreign-key checks (a lookup of each end, run row by row)
-- cost about as much as its key and both indexes together, and a deleted memory took its
-- links with it one cascaded row at a time. The engine keeps links whole itself: every
-- statement that writes a bank's memories or links runs under the bank's lock; a link is
-- only made to a memory read in that transaction (or, for an import's links found in its
-- own process, to one of a bank checked under the lock to be as the import read it); and
-- forgetting a memory, a document or a bank deletes its links in both directions in the
-- same transaction. The arms join every linked id to memory_units, so a link left by a
-- hand-made delete is never returned, though it may take a candidate's place.
DO $$
DECLARE
    name text;
BEGIN
    FOR name IN
        SELECT conname FROM pg_constraint
        WHERE conrelid = 'memory_links'::regclass AND contype = 'f'
          AND confrelid = 'memory_units'::regclass
    LOOP
        EXECUTE format('ALTER TABLE memory_links DROP CONSTRAINT %I', name);
    END LOOP;
END
$$;
