"""`python -m memlens.tui.cli`: the same command line as the `memlens` script."""

from memlens.tui.cli.main import main

if __name__ == "__main__":
    main()
