"""Memory management: reading memories back by id or page by page, and forgetting them."""
