"""The four retrieval arms, one SQL query each."""
