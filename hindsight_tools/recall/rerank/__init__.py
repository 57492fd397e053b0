"""The rerank stage: the reranker protocol, the chain and its providers."""
