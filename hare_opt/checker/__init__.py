"""The independent schedule checker, and the verification gate built on it."""

from hare_opt.checker.check import KINDS, check
from hare_opt.checker.verify import report_for, verify
from hare_opt.model import CheckReport

__all__ = ["KINDS", "CheckReport", "check", "report_for", "verify"]
