"""Charts of schedules (matplotlib, no display needed)."""

from hare_opt.plot.gantt import gantt, job_colors, save_gantt

__all__ = ["gantt", "job_colors", "save_gantt"]
