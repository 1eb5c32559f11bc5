"""Command-line interface (``hare-opt``)."""
