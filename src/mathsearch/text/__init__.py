"""Text analysis: words, math tokens and LaTeX-as-words, shared by indexing and querying."""
