"""The write path: validation, explicit-memory rules, working memory, persistence."""
