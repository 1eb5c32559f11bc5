"""Where cells run, and what happens when something goes wrong.

Every cell runs in a cell process (``sweeps.worker``) that runs cells of one group only
(``Cell.group``), so that what it loaded keys it (``util.version``). The local executor
keeps ``workers`` such processes busy, starting one for a group when a slot frees and
handing it that group's cells one at a time; the Dask executor sends batches of one
group to its workers, each batch run by a cell process there. Both share ``Collect``:

* Ctrl-C / SIGTERM to the driver: no new cell starts, running cells are abandoned (their
  processes killed, whole process groups), finished cells stay saved, and
  ``KeyboardInterrupt`` is raised: rerunning resumes.
* kill -9 of the driver: a cell process ends when its standard input closes, and a Dask
  worker of a LocalCluster started here holds a ``lifeline``.
* A cell that raises, or a cell process that dies: the others go on; at the end
  ``CellsFailed`` names every failed cell and its error. Nothing is saved for them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hare_opt.model import HareOptError
from hare_opt.util import children


class SweepError(HareOptError, ValueError):
    """A sweep or reproduction that cannot run as asked (bad config, failed cells)."""


#: Seconds between looks at the stop flag while cells run.
POLL_S = 0.2
#: A Dask batch holds about this much estimated CPU (seconds), at least one cell.
BATCH_CPU_S = 120.0
WORKER = [sys.executable, "-m", "hare_opt.sweeps.worker"]
DASK_INSTALL = "pip install 'hare-opt[dask]'"


@dataclass
class Failure:
    cell: Any
    error: str


@dataclass
class Collect:
    """Saves each finished cell, counts failures, watches the stop flag; ``cost`` gives
    a cell's estimated CPU seconds, by which the progress bar advances."""

    store: Any
    bar: Any
    cost: Callable[[Any], float] = lambda cell: 1.0
    stop: threading.Event = field(default_factory=threading.Event)
    failures: list[Failure] = field(default_factory=list)
    finished: int = 0

    def done(self, cell: Any, reply: dict[str, Any]) -> None:
        """Save the cell's rows, or record its failure (a reply with ``error``)."""
        if "error" in reply:
            self.failures.append(Failure(cell, str(reply["error"])))
        else:
            self.store.save(
                cell,
                reply["rows"],
                wall_s=float(reply["wall_s"]),
                cpu_s=float(reply["cpu_s"]),
                deps=reply["deps"],
                env=reply.get("env"),
            )
        self.finished += 1
        self.bar.update(self.cost(cell))
        self.bar.set_postfix_str(f"{self.finished} cells", refresh=False)

    def check(self) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt


def message(cell: Any) -> str:
    from hare_opt.sweeps.cells import CELLS

    return (
        json.dumps({"key": cell.key, "target": CELLS.spec(cell.fn).target, "params": cell.params})
        + "\n"
    )


class CellProcess:
    """One cell process (``sweeps.worker``) for ``group``: its own process group, tied to
    this one through its standard input."""

    def __init__(self, group: str):
        self.group = group
        self.cell: Any = None
        self.proc = subprocess.Popen(
            WORKER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            **children.spawn_options(),
        )
        children.track(self.proc.pid)
        assert self.proc.stdout is not None
        self.out = self.proc.stdout

    def send(self, cell: Any) -> None:
        self.cell = cell
        assert self.proc.stdin is not None
        self.proc.stdin.write(message(cell))
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        """The reply to the cell sent (blocks); a process that died answers with an error."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        cell, self.cell = self.cell, None
        if line:
            return json.loads(line)
        code = self.proc.wait()
        return {"key": cell.key, "error": f"its cell process died (exit code {code})"}

    def quit(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.write('{"quit": true}\n')
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        children.untrack(self.proc.pid)

    def kill(self) -> None:
        children.kill_group(self.proc.pid)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        children.untrack(self.proc.pid)


def by_group(todo: list, cost: Callable[[Any], float]) -> dict[str, deque]:
    """The cells by group, each group's dearest first; groups dearest first."""
    groups: dict[str, list] = {}
    for c in todo:
        groups.setdefault(c.group, []).append(c)
    ordered = sorted(groups.items(), key=lambda kv: -sum(cost(c) for c in kv[1]))
    return {g: deque(sorted(cs, key=lambda c: -cost(c))) for g, cs in ordered}


def run_local(todo: list, collect: Collect, workers: int | None) -> None:
    """Keep ``workers`` cell processes busy (default: the cores) until every cell ran."""
    slots = max(1, workers or os.cpu_count() or 1)
    queues = by_group(todo, collect.cost)
    running: list[CellProcess] = []
    sel = selectors.DefaultSelector()
    clean = False

    def next_group(current: str | None) -> str | None:
        if current is not None and queues.get(current):
            return current
        left = [g for g, q in queues.items() if q]
        busy = {p.group for p in running}
        idle = [g for g in left if g not in busy]
        return next(iter(idle or left), None)

    def feed(proc: CellProcess | None) -> None:
        group = next_group(proc.group if proc is not None else None)
        if proc is not None and group != proc.group:
            sel.unregister(proc.out)
            running.remove(proc)
            proc.quit()
            proc = None
        if group is None:
            return
        if proc is None:
            proc = CellProcess(group)
            running.append(proc)
            sel.register(proc.out, selectors.EVENT_READ, proc)
        proc.send(queues[group].popleft())

    try:
        while len(running) < slots and any(queues.values()):
            feed(None)
        while running:
            collect.check()
            for key, _ in sel.select(timeout=POLL_S):
                proc = key.data
                cell = proc.cell
                reply = proc.reply()
                collect.done(cell, reply)
                if proc.proc.poll() is not None:  # it died: a new one for what is left
                    sel.unregister(proc.out)
                    running.remove(proc)
                    children.untrack(proc.proc.pid)
                    feed(None)
                else:
                    feed(proc)
        clean = True
    finally:
        for proc in running:
            proc.quit() if clean else proc.kill()
        sel.close()


def run_batch(messages: list[str]) -> list[dict[str, Any]]:
    """Run cells (``message`` lines, one group) in a cell process here; their replies.
    What a Dask worker runs."""
    proc = subprocess.Popen(
        WORKER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        **children.spawn_options(),
    )
    out, _ = proc.communicate("".join(messages) + '{"quit": true}\n')
    replies = [json.loads(line) for line in out.splitlines() if line.strip()]
    done = {r["key"] for r in replies}
    lost = [json.loads(m)["key"] for m in messages if json.loads(m)["key"] not in done]
    return replies + [
        {"key": k, "error": f"its cell process died (exit code {proc.returncode})"} for k in lost
    ]


def batches(todo: list, cost: Callable[[Any], float], workers: int) -> list[list]:
    """Cells of one group, at most about ``BATCH_CPU_S`` of estimated CPU a batch and at
    most a quarter of a worker's share of the group, so that results keep arriving (an
    interrupt loses the batches running) and every worker has work."""
    out: list[list] = []
    for cells in by_group(todo, cost).values():
        most = max(1, len(cells) // (4 * workers))
        batch: list = []
        spent = 0.0
        for c in cells:
            if batch and (spent + cost(c) > BATCH_CPU_S or len(batch) >= most):
                out.append(batch)
                batch, spent = [], 0.0
            batch.append(c)
            spent += cost(c)
        out.append(batch)
    return out


class _Lifeline:
    """Dask worker plugin: the worker process exits when the driver that started its
    LocalCluster dies (only for clusters started here, never for a user's scheduler), and
    leaves the driver's process group, so that a signal to the group (a terminal's Ctrl-C,
    ``timeout``, ``kill -- -PGID``) reaches the driver only, which decides."""

    name = "hare-opt-lifeline"

    def setup(self, worker: Any) -> None:  # noqa: ARG002 - plugin signature
        children.lifeline()
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides on Ctrl-C


#: ``[scheme://]host:port`` of a Dask scheduler (schemes a remote scheduler can have).
_ADDRESS = re.compile(
    r"^(?:(?P<scheme>tcp|tls|ucx|ws|wss)://)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?)"
    r":(?P<port>\d{1,5})$"
)


def require_dask() -> None:
    """Refuse the Dask executor, before any work, when Dask is not installed."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise SweepError(
            f"--executor dask needs Dask, which is not installed: {DASK_INSTALL}"
        ) from None


def check_address(
    executor: str, address: str | None, *, reach: bool = True, timeout: float = 10.0
) -> None:
    """Refuse, before any work, an ``address`` that cannot be used: given without the
    dask executor, not ``[scheme://]host:port``, or (``reach``) no Dask scheduler
    completes Dask's handshake there within ``timeout`` seconds."""
    if executor == "dask":
        require_dask()
    if address is None:
        return
    if executor != "dask":
        raise SweepError(f"--address {address!r} applies to --executor dask only")
    m = _ADDRESS.match(address.strip())
    if not m or not 1 <= int(m["port"]) <= 65535:
        raise SweepError(
            f"--address {address!r}: expected a Dask scheduler address such as tcp://127.0.0.1:8786"
        )
    if reach:
        _handshake(address, timeout)


def _handshake(address: str, timeout: float) -> None:
    """Dask's own connection handshake and an identity call, bounded in time."""
    import asyncio

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=timeout)
        try:
            await asyncio.wait_for(comm.write({"op": "identity"}), timeout)
            reply = await asyncio.wait_for(comm.read(), timeout)
        finally:
            comm.abort()
        if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
            raise OSError("what answers there is not a Dask scheduler")

    try:
        asyncio.run(asyncio.wait_for(probe(), timeout + 1))
    except BaseException as exc:  # noqa: BLE001 - whatever a stranger answers, one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        why = str(exc) or type(exc).__name__
        raise SweepError(
            f"--address {address!r}: no Dask scheduler answers there ({why[:200]})"
        ) from None


@contextlib.contextmanager
def dask_client(workers: int | None, address: str | None) -> Iterator[Any]:
    require_dask()
    from dask.distributed import Client, LocalCluster

    cluster = None
    if address:
        client = Client(address, timeout=10)
    else:
        # death_timeout: a worker that loses its scheduler (the driver) closes itself
        # Dask's own log lines stay quiet: a worker's trouble reaches the user as a failed
        # cell, and a worker stopped with the run is not an error (its nanny would log one).
        cluster = LocalCluster(
            n_workers=workers or 2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            death_timeout=10,
            silence_logs=logging.CRITICAL,
        )
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


def run_dask(todo: list, collect: Collect, workers: int | None, address: str | None) -> None:
    from dask.distributed import as_completed

    with dask_client(workers, address) as client:
        n = len(client.scheduler_info().get("workers", {})) or workers or 2
        futures = {
            client.submit(run_batch, [message(c) for c in batch], pure=False): batch
            for batch in batches(todo, collect.cost, n)
        }
        pending = set(futures)
        ready = as_completed(list(futures))
        try:
            while pending:
                collect.check()
                got = ready.next_batch(block=False)
                if not got:
                    time.sleep(POLL_S)
                    continue
                for fut in got:
                    pending.discard(fut)
                    cells = {c.key: c for c in futures[fut]}
                    try:
                        replies = fut.result()
                    except Exception as exc:  # noqa: BLE001 - a lost worker: the batch failed
                        replies = [
                            {"key": k, "error": f"{type(exc).__name__}: {exc}"} for k in cells
                        ]
                    for r in replies:
                        collect.done(cells[r["key"]], r)
        finally:
            for fut in pending:
                fut.cancel()
