"""Compiled kernels, loaded by one owner per process.

Why one owner: numba's dispatchers are process-wide, so which kernel groups are loaded,
and what loading them cost, belongs to the process, not to a call. A first run after
installing compiles a group (tens of seconds): that is start-up, not search time, so
``solve`` loads a solver's groups before its clock starts (``warm_kernels``) and a solve
that needs another group on the way (an exact solver's start heuristic, a portfolio's
quick member) leaves the load out of its clock (``load_during``).

Compiled once: when loading a group compiles anything (a cold cache), every other group
is compiled then too, so the first command that compiles does it for all and no later
command compiles again; a command whose kernels compile inside its run (``simulate``)
calls ``complete()`` at its end for the same. While kernels run as Python
(``util.jit.interpreted``: a tiny solve in a process without numba) nothing loads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from hare_opt.model.options import Run
from hare_opt.util import jit, stopping
from hare_opt.util.registry import resolve

ReportFn = Callable[..., None]

#: Compiled-kernel groups: a function that loads them (compiling on a first run after
#: installing) and returns the seconds it took.
KERNELS: dict[str, str | Callable[[], object]] = {
    "hare": "hare_opt.heuristics.rounds:warm_up",
    "geobatch": "hare_opt.heuristics.geobatch:warm_up",
    "hare-paper": "hare_opt.heuristics.hare_paper:warm_up",
    "bnb": "hare_opt.solvers.bnb:warm_up",
    "sim": "hare_opt.sim.warm:warm_up",
}
NOTE = (
    "loading compiled kernels (a first run compiles them, tens of seconds; not counted "
    "in the time limit)"
)


class KernelLoader:
    """The process's kernel groups: ``loaded`` (names), ``mid_solve_s`` (seconds spent by
    ``load_during`` so far; the command line reports a solve's share as start-up)."""

    def __init__(self, groups: dict[str, str | Callable[[], object]]):
        self.groups = groups
        self.loaded: set[str] = set()
        self.mid_solve_s = 0.0

    def warm_kernels(self, names: tuple[str, ...], report: ReportFn | None = None) -> float:
        """Load the groups ``names`` not loaded yet; the seconds it took. ``report``: the
        run's progress sink, told before a load starts. (The command line recognises an
        interrupt inside this method by its name: ``cli.main._compiling``.)"""
        todo = [g for g in names if g not in self.loaded]
        if not todo or jit.interpreting():
            return 0.0
        t0 = time.perf_counter()
        if report is not None:
            report("solve", note=NOTE)
        before = jit.compile_seconds()
        self._load(todo)
        if jit.compile_seconds() > before:  # a cold cache: compile every group now, once
            self._load(self.groups)
        return time.perf_counter() - t0

    def _load(self, names: Iterable[str]) -> None:
        """Load the groups ``names`` not loaded yet."""
        for group in [g for g in names if g not in self.loaded]:
            resolve(self.groups[group])()
            self.loaded.add(group)

    def prepare(self, names: tuple[str, ...]) -> None:
        """Import what loading ``names`` imports, in the calling thread (numba, its typing
        and lowering registries, the groups' modules): a load in a worker that is let go
        of at a signal then imports nothing while the command ends."""
        jit.prepare()
        for group in names:
            if group in self.groups and isinstance(self.groups[group], str):
                resolve(self.groups[group])

    def complete(self) -> float:
        """When this process compiled anything, load every group not loaded yet (compiling
        it now: the command's one compile); else nothing. The seconds it took."""
        if jit.compile_seconds() == 0.0:
            return 0.0
        t0 = time.perf_counter()
        self._load(self.groups)
        return time.perf_counter() - t0

    def load_during(self, run: Run, names: tuple[str, ...]) -> None:
        """Load ``names`` in the middle of ``run``, leaving the time out of its clock.

        The load runs in a worker the caller lets go of when ``run.stop`` is set: a first
        run's compile takes tens of seconds and polls no stop, and the solver holds a
        schedule to return by now (a portfolio took 13.8 s to stop on a cold cache). The
        worker compiles on alone; the command's process ends without waiting for it."""
        if run.stop.is_set() or not names or jit.interpreting():
            return
        t0 = time.perf_counter()
        self.prepare(names)  # the imports here, in this thread (a signal sets run.stop)
        took = stopping.in_worker(
            lambda: self.warm_kernels(names, run.report), run.stop, "kernel load", grace=0.2
        )
        if took is None:  # let go: what it cost until then
            took = time.perf_counter() - t0
        run.exclude(took)
        self.mid_solve_s += took


LOADER = KernelLoader(KERNELS)
