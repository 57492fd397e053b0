-- A memory's late-interaction vectors read after the memory before it in its document
-- (hindsight_tools/retain/reading_context.py), and that memory's id. Nullable: a memory
-- first of its document, retained alone, or stored before this migration has only its own
-- reading. Like the vectors beside it, int8 noise that does not compress, kept out of line
-- without trying. The reading holds the words of the memory it was read after, so
-- forgetting or rewriting that one drops it: the index finds the readings made after a
-- memory.
ALTER TABLE memory_token_vectors
    ADD COLUMN context_vectors bytea,
    ADD COLUMN context_of text;
ALTER TABLE memory_token_vectors ALTER COLUMN context_vectors SET STORAGE EXTERNAL;
CREATE INDEX memory_token_vectors_context_of ON memory_token_vectors (bank_id, context_of)
    WHERE context_of IS NOT NULL;
