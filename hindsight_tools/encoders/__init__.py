"""The models that turn text into vectors and counts: embedding, late interaction, tokens."""
