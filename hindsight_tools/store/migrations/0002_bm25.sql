-- Term statistics for the bm25 keyword backend: Okapi BM25 inside stock PostgreSQL.
-- Terms are the lexemes of memory_units.search_vector; retain keeps every count current.
ALTER TABLE banks
    ADD COLUMN doc_count    bigint NOT NULL DEFAULT 0,
    ADD COLUMN total_length bigint NOT NULL DEFAULT 0;

ALTER TABLE memory_units ADD COLUMN search_length integer NOT NULL DEFAULT 0;

-- One row per (term, memory): the postings list, looked up by term.
CREATE TABLE memory_terms (
    bank_id text NOT NULL,
    term    text NOT NULL,
    unit_id text NOT NULL,
    tf      integer NOT NULL CHECK (tf > 0),
    PRIMARY KEY (bank_id, term, unit_id),
    FOREIGN KEY (bank_id, unit_id) REFERENCES memory_units ON DELETE CASCADE
);
CREATE INDEX memory_terms_unit ON memory_terms (bank_id, unit_id);

-- Document frequency per bank and term.
CREATE TABLE bank_terms (
    bank_id text NOT NULL REFERENCES banks ON DELETE CASCADE,
    term    text NOT NULL,
    df      integer NOT NULL,
    PRIMARY KEY (bank_id, term)
);
