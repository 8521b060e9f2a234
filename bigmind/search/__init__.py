"""Search: keyword ranking, text search, the embedder, vectors and hybrid recall."""
