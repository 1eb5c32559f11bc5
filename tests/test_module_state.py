"""Module-level mutable state: none outside registries, but for what a process owns once.

A module global that changes while the library runs makes one call depend on the calls
before it. What remains is listed here with why it is the process's, not a call's; a new
one fails the test until it is moved into an object a call owns (``model.options.Run``,
a registry) or listed with its reason. Module constants (UPPER_CASE) are tables read,
never written: a representative run (solve, simulate, bound) leaves each one as it was.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
import types

import hare_opt
from hare_opt.util.registry import Registry

#: (module, name) -> why the process, not one call, owns it.
ALLOWED: dict[tuple[str, str], str] = {
    (
        "hare_opt.cli.main",
        "_skip_teardown",
    ): "one command per process: after a signal it skips the interpreter's teardown",
    (
        "hare_opt.heuristics.rounds",
        "_fixed_memo",
    ): "a cache keyed by a weak reference to the instance: a hit returns what a miss computes",
    (
        "hare_opt.solvers.kernels",
        "LOADER",
    ): "the one owner of the kernel groups this process loaded (numba's dispatchers are "
    "process-wide) and of the seconds spent loading them mid-solve (reported, not decided on)",
    (
        "hare_opt.util.highs",
        "_threads",
    ): "HiGHS fixes its thread pool once per process; later calls must ask for the same",
    ("hare_opt.util.interrupt", "_events"): "signal handlers are process-wide in Python",
    ("hare_opt.util.interrupt", "_state"): "signal handlers are process-wide in Python",
    # re-exported by util.interrupt under the same name (its public discipline)
    ("hare_opt.util.interrupt", "_abandoned"): "native threads let go are the process's",
    ("hare_opt.util.stopping", "_abandoned"): "native threads let go are the process's",
    (
        "hare_opt.util.children",
        "_groups",
    ): "child process groups to kill on a hard exit: a signal ends the whole process",
    (
        "hare_opt.util.startup",
        "_prior",
    ): "the signal handlers the start-up guard replaced (process-wide)",
    ("hare_opt.util.jit", "_clock"): "numba's compile events are process-wide",
    ("hare_opt.util.jit", "_pending"): (
        "kernels declared before numba loaded: their dispatchers are made once per process"
    ),
    (
        "hare_opt.util.version",
        "_USED",
    ): "modules and data this process used, a record beside sys.modules (cache keys)",
    # the last value of a registration loop (``for _spec in (...): register(_spec)``):
    # a spec already in its registry, never read again
    ("hare_opt.bounds.lower", "_spec"): "registration loop variable",
    ("hare_opt.sim.policy", "_spec"): "registration loop variable",
    ("hare_opt.solvers.base", "_spec"): "registration loop variable",
    ("hare_opt.sweeps.cells", "_spec"): "registration loop variable",
}


def modules() -> list[types.ModuleType]:
    return [
        importlib.import_module(m.name)
        for m in pkgutil.walk_packages(hare_opt.__path__, "hare_opt.")
    ]


def constant(name: str) -> bool:
    return name.lstrip("_").isupper()


def mutable(value: object) -> bool:
    if isinstance(value, (types.ModuleType, types.FunctionType, type, Registry)):
        return False
    return isinstance(value, (list, dict, set, bytearray)) or (
        type(value).__module__.startswith("hare_opt")
        and not callable(value)
        and not isinstance(value, (tuple, frozenset))
    )


def test_mutable_module_state_is_listed_with_its_reason():
    found = {
        (mod.__name__, k)
        for mod in modules()
        for k, v in vars(mod).items()
        if not k.startswith("__") and not constant(k) and mutable(v)
    }
    found |= {(m, k) for (m, k) in ALLOWED if constant(k)}  # a record named as a constant
    assert found == set(ALLOWED), (sorted(found - set(ALLOWED)), sorted(set(ALLOWED) - found))


def test_a_run_writes_no_module_constant():
    from hare_opt.bounds import lower_bound
    from hare_opt.examples import fig1_instance
    from hare_opt.generators import paper_instance
    from hare_opt.sim import simulate
    from hare_opt.solvers import solve

    tables = {
        (mod.__name__, k): v
        for mod in modules()
        for k, v in vars(mod).items()
        if constant(k) and isinstance(v, (list, dict, set)) and (mod.__name__, k) not in ALLOWED
    }
    before = {key: copy.deepcopy(v) for key, v in tables.items()}
    inst = fig1_instance()
    for solver in ("hare", "wspt", "cpsat"):
        solve(inst, solver)
    lower_bound(inst)
    workload = paper_instance(0, 6, regime="compressed")
    for policy in ("hare", "hlas", "gavel-fifo", "allox"):
        simulate(workload, policy)
    changed = sorted(key for key, v in tables.items() if v != before[key])
    assert not changed, changed
