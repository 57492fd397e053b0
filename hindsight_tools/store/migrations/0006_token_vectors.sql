-- Late interaction (hindsight_tools/encoders/late_interaction.py): each memory's token vectors,
-- computed at retain so a recall only encodes its question. A table of their own rather
-- than a column of memory_units: filling a column later (the backfill of memories retained
-- before this migration or with late interaction off) rewrites the whole row and inserts
-- it anew into every index of memory_units, HNSW included, ~9 rows/s at 100k memories;
-- here it is one insert into one primary key. ~16 KB of int8 noise a memory does not
-- compress, so the value goes out of line without a compression attempt.
CREATE TABLE memory_token_vectors (
    bank_id text NOT NULL,
    id      text NOT NULL,
    vectors bytea NOT NULL,
    PRIMARY KEY (bank_id, id),
    FOREIGN KEY (bank_id, id) REFERENCES memory_units ON DELETE CASCADE
);
ALTER TABLE memory_token_vectors ALTER COLUMN vectors SET STORAGE EXTERNAL;
