"""Text search over steps: the search document, its field and the query."""
