"""cognitive_memory."""
