"""Screens of the memlens app."""
