"""A cell process: ``python -m hare_opt.sweeps.worker`` runs cells of one group, one by one.

Why a process of its own per group: a cell is keyed on the package's modules its process
loaded (``util.version``). A process that starts with none of them loaded and runs
cells of one group only (one policy's simulations, say) loads what those cells need and
nothing else, so a cell's key names the code it could have run, and a fix to another
policy leaves it valid. The driver (``sweeps.executors``) starts one per group and sends
it cells.

Protocol: one JSON object a line. In: ``{"key", "target": "module:function", "params"}``
or ``{"quit": true}``. Out, per cell: ``{"key", "rows", "wall_s", "cpu_s", "deps",
"env"}`` or ``{"key", "error"}``. ``deps``: the hash of every module loaded and data file
read by then (``util.version.dependency_hashes``). Standard library only until a cell's
target is imported; the process ends when its standard input closes (the driver died),
taking its own process group (a cell's children) with it.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import resource
import signal
import sys
import threading
import time
from typing import Any

#: Libraries whose versions a cell records (provenance; a drift check names them).
LIBRARIES = ("numpy", "scipy", "pandas", "numba", "highspy", "ortools", "pulp")


def _env() -> dict[str, str]:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for lib in LIBRARIES:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            out[lib] = "absent"
    return out


def _reader(inbox: queue.Queue) -> None:
    """Lines from the driver; end of input without ``quit``: the driver is gone, so this
    process ends at once, whatever the cell is doing."""
    for line in sys.stdin:
        msg = json.loads(line)
        inbox.put(msg)
        if msg.get("quit"):
            return
    _die()


def _die() -> None:
    try:
        os.killpg(0, signal.SIGKILL)  # this process's group: the cell's children too
    finally:
        os._exit(1)


def run_one(msg: dict[str, Any]) -> dict[str, Any]:
    """Run one cell: its rows, wall and CPU seconds (children's included), dependencies."""
    module, _, attr = msg["target"].partition(":")
    t0, c0 = time.perf_counter(), time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        fn: Any = importlib.import_module(module)
        for part in attr.split("."):
            fn = getattr(fn, part)
        rows = fn(**msg["params"])
    except Exception as exc:  # noqa: BLE001 - reported with the cell, never saved
        return {"key": msg["key"], "error": f"{type(exc).__name__}: {exc}"}
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + (k1.ru_utime + k1.ru_stime - k0.ru_utime - k0.ru_stime)
    from hare_opt.util import version

    modules = sorted({*version.loaded_modules(), __spec__.name if __spec__ else __name__})
    return {
        "key": msg["key"],
        "rows": rows,
        "wall_s": time.perf_counter() - t0,
        "cpu_s": cpu,
        "deps": version.dependency_hashes(modules, version.data_read()),
    }


def main() -> int:
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(inbox,), daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides on Ctrl-C
    env: dict[str, str] | None = None
    out = sys.stdout
    sys.stdout = sys.stderr  # a cell's prints must not corrupt the protocol
    while True:
        msg = inbox.get()
        if msg.get("quit"):
            return 0
        reply = run_one(msg)
        if "error" not in reply:
            env = env or _env()
            reply["env"] = env
        out.write(json.dumps(reply, default=_plain) + "\n")
        out.flush()


def _plain(x: Any) -> Any:
    """numpy scalars and arrays in a cell's rows, as JSON."""
    if hasattr(x, "tolist"):
        return x.tolist()
    return str(x)


if __name__ == "__main__":
    sys.exit(main())
