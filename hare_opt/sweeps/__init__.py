"""Experiment machinery: declarative sweeps, resumable result stores, cell functions.

The names below load on first use (``util.lazy``): a cell process (``sweeps.worker``)
imports this package and nothing of it until its cell does.
"""

from typing import TYPE_CHECKING

from hare_opt.util.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(
        ["Cell", "Sweep", "SweepError", "run_cells", "run_sweep"], "hare_opt.sweeps.sweep"
    ),
    "Store": "hare_opt.sweeps.store",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from hare_opt.sweeps.store import Store
    from hare_opt.sweeps.sweep import Cell, Sweep, SweepError, run_cells, run_sweep

__all__ = ["Cell", "Store", "Sweep", "SweepError", "run_cells", "run_sweep"]
