-- A memory's late-interaction vectors read after the memory before it in its document
-- (hindsight_tools/retain/reading_context.py). Nullable: a memory first of its document,
-- retained alone, or stored before this migration has only its own reading. Like the
-- vectors beside it, int8 noise that does not compress, kept out of line without trying.
ALTER TABLE memory_token_vectors ADD COLUMN context_vectors bytea;
ALTER TABLE memory_token_vectors ALTER COLUMN context_vectors SET STORAGE EXTERNAL;
