"""Text helpers: tokenization for the keyword path, entity and slot extraction."""
