"""The independent schedule checker."""

from hare_opt.checker.check import KINDS, CheckReport, check

__all__ = ["KINDS", "CheckReport", "check"]
