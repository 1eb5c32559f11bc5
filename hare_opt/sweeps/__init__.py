"""Experiment machinery: declarative sweeps, resumable result stores, cell functions."""

from hare_opt.sweeps.sweep import Cell, Store, Sweep, SweepError, run_cells, run_sweep

__all__ = ["Cell", "Store", "Sweep", "SweepError", "run_cells", "run_sweep"]
