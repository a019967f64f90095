"""PLACEHOLDER: `memlens graph` is being written."""
