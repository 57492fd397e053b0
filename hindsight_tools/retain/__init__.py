"""The write path: items into units, entities, links and token vectors."""
