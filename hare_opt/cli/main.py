"""``hare-opt`` entry point.

Sub-commands are discovered from ``hare_opt.cli.commands``: each module there
defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
so adding a command touches no shared file. Errors a user can fix (bad files,
unknown names) print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from hare_opt.model import HareOptError

EXIT_USAGE = 2


def _commands() -> list:
    import hare_opt.cli.commands as pkg

    mods = [_import_command(f"{pkg.__name__}.{m.name}", m.name)
            for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: m.NAME)


def _import_command(module: str, name: str) -> Any:
    """The command module, or a stand-in that reports why it cannot load.

    One command with a missing optional dependency (or half-written by a
    colleague) must not take every other command down with it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        reason = f"command unavailable ({exc})"

        def run(args: argparse.Namespace) -> int:
            raise HareOptError(reason)
        def add_arguments(p: argparse.ArgumentParser) -> None:
            p.add_argument("rest", nargs=argparse.REMAINDER)
        return SimpleNamespace(NAME=name, HELP=f"[{reason}]", run=run,
                               add_arguments=add_arguments)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hare-opt",
        description="Schedule distributed ML training jobs on heterogeneous GPUs "
                    "(Hare, HPDC '22): exact solvers, heuristics, checker, simulator.")
    from hare_opt import __version__
    parser.add_argument("--version", action="version", version=f"hare-opt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "_run"):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args._run(args) or 0)
    except HareOptError as exc:
        print(f"hare-opt {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError) as exc:
        # Files that cannot be written, numbers a user typed wrong: one line, no traceback.
        print(f"hare-opt {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"hare-opt {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
