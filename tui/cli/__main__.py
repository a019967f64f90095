"""`python -m memlens.tui.cli`: the same command line as the `memlens` script."""

from .main import main

if __name__ == "__main__":
    main()
