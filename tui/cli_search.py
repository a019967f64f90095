"""PLACEHOLDER: `memlens search` is being written."""
