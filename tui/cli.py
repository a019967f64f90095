"""memlens command line (placeholder while the CLI is written)."""


def main() -> None:
    raise SystemExit("memlens: CLI not written yet")
