"""dream_cycle."""
