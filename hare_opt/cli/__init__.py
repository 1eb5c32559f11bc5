"""Command-line interface (``hare-opt``).

In the ``hare-opt`` process itself, a signal guard is installed before anything else is
imported (``hare_opt.util.startup``): an interrupt during start-up gives exit 130 too.
"""

from hare_opt.util import startup as _startup

if _startup.is_command_line():
    _startup.guard()
