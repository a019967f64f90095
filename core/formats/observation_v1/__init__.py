"""observation_v1."""
