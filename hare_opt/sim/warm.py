"""Loading the simulator's compiled engines ahead of a run (``solvers.kernels.KERNELS``'s
``"sim"`` group).

Why: on a cold numba cache the engines compile on their first run (seconds to tens of
seconds); compiling them with the other kernel groups makes the first command that
compiles do it for all, so that a later ``hare-opt simulate`` does not compile again.
"""

from __future__ import annotations

import threading
import time

from hare_opt.util.stopping import searching


def warm_up() -> float:
    """Run every policy once (a gang one under each semantics) on a toy workload (their
    kernels load, or compile on a cold cache); returns the seconds it took. A signal the
    command's edge turns into a stop ends the warm-up between policies (a planner's
    search would otherwise take it and go on)."""
    from hare_opt.generators import paper_instance
    from hare_opt.sim.policy import POLICIES, policy_mode
    from hare_opt.sim.semantics import DEFAULT_SEMANTICS, SEMANTICS
    from hare_opt.sim.simulator import simulate

    t0 = time.perf_counter()
    inst = paper_instance(0, 4)
    with searching(threading.Event()) as stop:
        for name in POLICIES.names():
            for semantics in SEMANTICS if policy_mode(name) == "gang" else (DEFAULT_SEMANTICS,):
                if stop.is_set():
                    return time.perf_counter() - t0
                simulate(inst, name, semantics=semantics)
    return time.perf_counter() - t0
