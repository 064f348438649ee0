"""``python -m toolreplay``: the same as the ``toolreplay`` command."""

from toolreplay.cli.main import main

if __name__ == "__main__":
    main()
