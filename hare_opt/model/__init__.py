"""The problem model: one home for GPUs, jobs, instances, schedules and results."""

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

__all__ = ["BOUND_TOL", "GPU", "MAX_TIME", "STATUSES", "CheckReport", "HareOptError", "Instance",
           "InstanceError", "Job", "Model", "OptionError", "Result", "ScheduleError",
           "SolverError", "Schedule", "Status", "Task", "ceil_bound", "min_makespan_identical"]
