"""Widgets of the memlens app."""
