-- Late interaction (hindsight_tools/late_interaction.py): each memory's token vectors,
-- computed at retain so a recall only encodes its question. NULL for memories retained
-- with late interaction off or before this migration; recall encodes those on the fly and
-- MemoryEngine.backfill_token_vectors() stores them. ~15 KB of int8 noise a memory does not
-- compress, so the value goes out of line without a compression attempt.
ALTER TABLE memory_units ADD COLUMN token_vectors bytea;
ALTER TABLE memory_units ALTER COLUMN token_vectors SET STORAGE EXTERNAL;
