"""memlens terminal front ends: the Textual app and the command line."""
