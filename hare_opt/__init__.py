"""hare_opt: exact and heuristic scheduling of distributed training jobs on heterogeneous GPUs.

>>> import hare_opt as ho
>>> m = ho.Model()
>>> _ = m.add_gpus("V100", 1); _ = m.add_gpus("K80", 1)
>>> _ = m.add_job({"V100": 4, "K80": 10}, rounds=2, tasks_per_round=2, weight=2)
>>> inst = m.build("example")
>>> inst.num_tasks
4

The names below are imported on first use (``hare_opt.util.lazy``): ``import hare_opt``
loads nothing heavy.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    **dict.fromkeys(["CheckReport", "check"], "hare_opt.checker"),
    **dict.fromkeys(
        ["load_instance", "load_result", "save_instance", "save_result"], "hare_opt.io"
    ),
    **dict.fromkeys(
        [
            "GPU",
            "HareOptError",
            "Instance",
            "InstanceError",
            "Job",
            "Model",
            "Result",
            "Schedule",
            "ScheduleError",
            "Stats",
            "Task",
        ],
        "hare_opt.model",
    ),
    "available_solvers": "hare_opt.solvers",
    "solve": "hare_opt.solvers.library",  # the library's edge: Ctrl-C keeps the best schedule
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.checker import CheckReport, check
    from hare_opt.io import load_instance, load_result, save_instance, save_result
    from hare_opt.model import (
        GPU,
        HareOptError,
        Instance,
        InstanceError,
        Job,
        Model,
        Result,
        Schedule,
        ScheduleError,
        Stats,
        Task,
    )
    from hare_opt.solvers import available_solvers
    from hare_opt.solvers.library import solve

__all__ = [
    "GPU",
    "CheckReport",
    "HareOptError",
    "Instance",
    "InstanceError",
    "Job",
    "Model",
    "Result",
    "Schedule",
    "ScheduleError",
    "Stats",
    "Task",
    "available_solvers",
    "check",
    "load_instance",
    "load_result",
    "save_instance",
    "save_result",
    "solve",
]
