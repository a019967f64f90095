"""PLACEHOLDER: `memlens search` is being written (replace this whole file)."""

import click


@click.command()
def search() -> None:
    """Not written yet."""
    raise click.UsageError("search is not available yet")
