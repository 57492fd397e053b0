-- The primary key (bank_id, from_unit_id, to_unit_id, link_type) already finds a memory's
-- outgoing links, and checks their type in the index before reading a row, so the second
-- index on (bank_id, from_unit_id, link_type, weight DESC) only cost upkeep: a third of
-- the btree work of every link written, on the store's largest table. No statement orders
-- links by weight. The index of incoming links stays, for the arms that follow links
-- backwards.
DROP INDEX IF EXISTS memory_links_from;
