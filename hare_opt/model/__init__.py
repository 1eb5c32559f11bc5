"""The problem model: one home for GPUs, jobs, instances, schedules and results."""

from hare_opt.model.builder import Model
from hare_opt.model.errors import HareOptError, InstanceError, ScheduleError
from hare_opt.model.instance import GPU, MAX_TIME, Instance, Job, min_makespan_identical
from hare_opt.model.schedule import STATUSES, Result, Schedule, Status, Task

__all__ = ["GPU", "MAX_TIME", "STATUSES", "HareOptError", "Instance", "InstanceError", "Job",
           "Model", "Result", "Schedule", "ScheduleError", "Status", "Task",
           "min_makespan_identical"]
