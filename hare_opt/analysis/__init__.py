"""Analyses of a schedule: why each job completes when it does (``explain``), the chain
and critical path of its disjunctive graph, GPU time idle while work waited."""

from hare_opt.analysis.explain import Explanation, JobStory, explain
from hare_opt.analysis.graph import Link, Placed, chain, decompose, left_shift

__all__ = [
    "Explanation",
    "JobStory",
    "Link",
    "Placed",
    "chain",
    "decompose",
    "explain",
    "left_shift",
]
