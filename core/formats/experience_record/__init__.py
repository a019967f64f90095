"""experience_record."""
