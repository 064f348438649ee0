"""``python -m toolreplay``: the same as the ``toolreplay`` command."""

from .cli import main

if __name__ == "__main__":
    main()
