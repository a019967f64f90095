"""PLACEHOLDER: `memlens graph` is being written (replace this whole file)."""

import click


@click.command()
def graph() -> None:
    """Not written yet."""
    raise click.UsageError("graph is not available yet")
