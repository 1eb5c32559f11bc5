"""The problem model: one home for GPUs, jobs, instances, schedules and results.

The names below load on first use (``hare_opt.util.lazy``): a command that only needs
the error classes does not pay for numpy.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {
    "Model": "hare_opt.model.builder",
    **dict.fromkeys(
        ["HareOptError", "InstanceError", "OptionError", "ScheduleError", "SolverError"],
        "hare_opt.model.errors",
    ),
    **dict.fromkeys(
        ["GPU", "MAX_TIME", "Instance", "Job", "min_makespan_identical"], "hare_opt.model.instance"
    ),
    **dict.fromkeys(
        ["BOUND_TOL", "STATUSES", "CheckReport", "Result", "Status", "ceil_bound"],
        "hare_opt.model.result",
    ),
    **dict.fromkeys(["Schedule", "Task"], "hare_opt.model.schedule"),
    "Stats": "hare_opt.model.stats",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.model.builder import Model
    from hare_opt.model.errors import (
        HareOptError,
        InstanceError,
        OptionError,
        ScheduleError,
        SolverError,
    )
    from hare_opt.model.instance import GPU, MAX_TIME, Instance, Job, min_makespan_identical
    from hare_opt.model.result import (
        BOUND_TOL,
        STATUSES,
        CheckReport,
        Result,
        Status,
        ceil_bound,
    )
    from hare_opt.model.schedule import Schedule, Task
    from hare_opt.model.stats import Stats

__all__ = [
    "BOUND_TOL",
    "CheckReport",
    "GPU",
    "HareOptError",
    "Instance",
    "InstanceError",
    "Job",
    "MAX_TIME",
    "Model",
    "OptionError",
    "Result",
    "STATUSES",
    "Schedule",
    "ScheduleError",
    "SolverError",
    "Stats",
    "Status",
    "Task",
    "ceil_bound",
    "min_makespan_identical",
]
