-- Every key carries bank_id, so the store can be sharded by bank (docs/scaling.md): a
-- sharded PostgreSQL (Citus) checks a primary key or unique constraint only within one
-- shard, and a foreign key only between rows of one shard, so each of them must include
-- the column the tables are distributed by. Before this, entities were keyed by their
-- identity id alone and unit_entities referenced that id alone. The ids stay as they are
-- (unique across the table already), so no row changes: only the keys and one index do.
-- A mention whose bank differs from its entity's would fail the new foreign key and stop
-- the migration with nothing changed; retain never wrote one.
ALTER TABLE unit_entities DROP CONSTRAINT unit_entities_entity_id_fkey;
ALTER TABLE entities DROP CONSTRAINT entities_pkey;
ALTER TABLE entities ADD CONSTRAINT entities_pkey PRIMARY KEY (bank_id, id);
ALTER TABLE unit_entities ADD CONSTRAINT unit_entities_entity_fkey
    FOREIGN KEY (bank_id, entity_id) REFERENCES entities (bank_id, id) ON DELETE CASCADE;
-- The graph arm expands an entity to its memories within the bank, in unit order.
DROP INDEX unit_entities_entity;
CREATE INDEX unit_entities_entity ON unit_entities (bank_id, entity_id, unit_id);

-- A sharded PostgreSQL refuses ON DELETE SET NULL on a foreign key that includes the
-- distribution column, even PostgreSQL 15's SET NULL (column) that leaves bank_id alone.
-- It never fired anyway: a memory's chunk belongs to the memory's own document, forgetting
-- a document deletes its memories first, orphaned chunks and documents are deleted only
-- when no memory refers to them, and deleting a bank deletes its memories in the same
-- statement (the check runs after all of that statement's cascades). So the keys become
-- plain (NO ACTION): the same rows, and a delete that would orphan a memory now fails
-- instead of silently unlinking it.
ALTER TABLE memory_units
    DROP CONSTRAINT memory_units_bank_id_document_id_fkey,
    DROP CONSTRAINT memory_units_bank_id_chunk_id_fkey,
    ADD CONSTRAINT memory_units_document_fkey
        FOREIGN KEY (bank_id, document_id) REFERENCES documents (bank_id, document_id),
    ADD CONSTRAINT memory_units_chunk_fkey
        FOREIGN KEY (bank_id, chunk_id) REFERENCES chunks (bank_id, chunk_id);
