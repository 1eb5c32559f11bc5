"""Heuristics: the shared list-scheduling engine, Hare (paper and ours) and simple rules."""
