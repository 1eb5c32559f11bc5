"""The independent schedule checker, the check of a schedule file's header against its
tasks, and the verification gate built on the checker."""

from hare_opt.checker.check import KINDS, check
from hare_opt.checker.header import check_header
from hare_opt.checker.verify import report_for, verify
from hare_opt.model import CheckReport

__all__ = ["KINDS", "CheckReport", "check", "check_header", "report_for", "verify"]
