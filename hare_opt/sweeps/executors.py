"""Where cells run, and what happens when something goes wrong.

Why a module of its own: the sweep engine promises that an interrupted or killed run
loses only the cells still running, that no worker outlives the driver, and that a
failed cell is reported as failed, never saved as computed. That is the same for the
local process pool and for Dask, so both executors share ``Collect``.

* Ctrl-C / SIGTERM to the driver: no new cell starts, running cells are abandoned (their
  workers killed, whole process groups), finished cells stay saved, and
  ``KeyboardInterrupt`` is raised: rerunning resumes. A cell is never saved from a
  worker that was asked to stop (it might hold a truncated search).
* kill -9 of the driver: pool workers and the Dask workers of a LocalCluster started
  here hold a ``lifeline`` and exit within a second.
* A cell that raises: the others go on; at the end ``CellsFailed`` names every failed
  cell and its error.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from hare_opt.model import HareOptError
from hare_opt.util import interrupt


class SweepError(HareOptError, ValueError):
    """A sweep or reproduction that cannot run as asked (bad config, failed cells)."""


#: Seconds between looks at the stop flag while cells run.
POLL_S = 0.2


@dataclass
class Failure:
    cell: Any
    error: str


@dataclass
class Collect:
    """Saves each finished cell, counts failures, watches the stop flag."""

    store: Any
    bar: Any
    stop: threading.Event = field(default_factory=threading.Event)
    failures: list[Failure] = field(default_factory=list)

    def done(self, cell: Any, outcome: Callable[[], tuple]) -> None:
        """Save the cell's rows, or record its failure (``outcome`` returns or raises)."""
        try:
            rows, *times = outcome()  # wall s, and the cell's CPU s where measured
        except Exception as exc:  # noqa: BLE001 - reported with the cell, see module doc
            self.failures.append(Failure(cell, f"{type(exc).__name__}: {exc}"))
        else:
            self.store.save(cell, rows, *times)
        self.bar.update()

    def check(self) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt


def run_inline(todo: list, collect: Collect, runner: Callable) -> None:
    """One cell after another in this process (``workers=1``): debuggable, no pool."""
    for cell in todo:
        collect.check()
        box: list = []

        def outcome(cell: Any = cell, box: list = box) -> tuple:
            box.append(runner(cell))
            collect.check()  # a signal may have cut a search in the cell short: not pure
            return box[0]

        collect.done(cell, outcome)


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    for proc in list(getattr(pool, "_processes", {}).values()):
        interrupt.kill_group(proc.pid)  # the worker's group: its own children too
        with contextlib.suppress(OSError):
            proc.kill()  # in case the worker had not made its group yet


def run_pool(todo: list, collect: Collect, runner: Callable, workers: int | None) -> None:
    """A local process pool; workers in their own process groups, tied to this process."""
    pool = ProcessPoolExecutor(max_workers=workers, initializer=interrupt.child_init,
                               initargs=(os.getpid(),))
    clean = False
    try:
        futures = {pool.submit(runner, c): c for c in todo}
        pending = set(futures)
        while pending:
            collect.check()
            finished, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for fut in finished:
                collect.done(futures[fut], fut.result)
        clean = True
    finally:
        if not clean:
            _kill_pool(pool)
        pool.shutdown(wait=clean, cancel_futures=True)


class _Lifeline:
    """Dask worker plugin: the worker process exits when the driver that started its
    LocalCluster dies (only for clusters started here, never for a user's scheduler), and
    leaves the driver's process group, so that a signal to the group (a terminal's Ctrl-C,
    ``timeout``, ``kill -- -PGID``) reaches the driver only, which decides."""

    name = "hare-opt-lifeline"

    def setup(self, worker: Any) -> None:  # noqa: ARG002 - plugin signature
        interrupt.lifeline()
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides on Ctrl-C


#: ``[scheme://]host:port`` of a Dask scheduler (schemes a remote scheduler can have).
_ADDRESS = re.compile(r"^(?:(?P<scheme>tcp|tls|ucx|ws|wss)://)?"
                      r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?)"
                      r":(?P<port>\d{1,5})$")


def check_address(executor: str, address: str | None, *, reach: bool = True,
                  timeout: float = 5.0) -> None:
    """Refuse, before any work, an ``address`` that cannot be used: given without the
    dask executor, not ``[scheme://]host:port``, or (``reach``, plain TCP) nobody answers."""
    if address is None:
        return
    if executor != "dask":
        raise SweepError(f"--address {address!r} applies to --executor dask only")
    m = _ADDRESS.match(address.strip())
    if not m or not 1 <= int(m["port"]) <= 65535:
        raise SweepError(f"--address {address!r}: expected a Dask scheduler address such as "
                         "tcp://127.0.0.1:8786")
    if reach and m["scheme"] in (None, "tcp"):
        host = m["host"].strip("[]")
        try:
            with socket.create_connection((host, int(m["port"])), timeout=timeout):
                pass
        except OSError as exc:
            raise SweepError(f"--address {address!r}: no Dask scheduler answers there "
                             f"({exc.strerror or exc})") from None


@contextlib.contextmanager
def dask_client(workers: int | None, address: str | None) -> Iterator[Any]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise SweepError("the dask executor needs `pip install hare-opt[dask]`") from None
    cluster = None
    if address:
        client = Client(address)
    else:
        # death_timeout: a worker that loses its scheduler (the driver) closes itself
        # Dask's own log lines stay quiet: a worker's trouble reaches the user as a failed
        # cell, and a worker stopped with the run is not an error (its nanny would log one).
        cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None, death_timeout=10,
                               silence_logs=logging.CRITICAL)
        # ... nor does a connection the stop cut short, found by the garbage collector
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        client = Client(cluster)
        from distributed.diagnostics.plugin import WorkerPlugin

        plugin = type("Lifeline", (_Lifeline, WorkerPlugin), {})()
        client.register_plugin(plugin, name=_Lifeline.name)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=5)


def run_dask(todo: list, collect: Collect, runner: Callable, workers: int | None,
             address: str | None) -> None:
    from dask.distributed import as_completed

    with dask_client(workers, address) as client:
        futures = {client.submit(runner, c, pure=False): c for c in todo}
        pending = set(futures)
        ready = as_completed(list(futures))
        try:
            while pending:
                collect.check()
                batch = ready.next_batch(block=False)
                if not batch:
                    time.sleep(POLL_S)
                    continue
                for fut in batch:
                    pending.discard(fut)
                    collect.done(futures[fut], fut.result)
        finally:
            for fut in pending:
                fut.cancel()
