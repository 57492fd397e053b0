-- Where each memory stands in its document, so that a call adding to a document finds the
-- memory before its first item and reads that item after it
-- (hindsight_tools/retain/reading_context.py). Positions grow with every call that adds to
-- a document; memories stored before this migration keep none (their order is not known)
-- and are never taken as the memory before. Nullable and without a default, so adding it
-- doesn't rewrite the table. The document index gains the position: the memory before is
-- the last entry of its document below a position, read backwards, and searches by
-- document alone use the index as they used the old one.
ALTER TABLE memory_units ADD COLUMN document_position bigint;
DROP INDEX memory_units_document;
CREATE INDEX memory_units_document ON memory_units (bank_id, document_id, document_position);
