"""The recall pipeline: request -> arms -> fusion -> rerank -> scoring -> token budget -> result."""
