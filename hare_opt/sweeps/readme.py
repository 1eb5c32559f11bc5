"""``paper_figs/README.md``: a summary that reads at a glance, then each item in full.

The summary table has one line per item: its claim in a line and the verdict's word for
each of the paper's Hare readings and ours (or for the item when it is not judged per
Hare). Below it, the run's cost and provenance, then a section per item with the
paper's claim (as data, with its tolerance), our numbers and the whole verdict. A run of
some items (``--only``) keeps the other items' sections and the earlier run lines: each
says how its sections were made.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hare_opt.io import atomic_write_text
from hare_opt.util.version import code_version

#: The Hares each simulator claim is judged for, as the summary's columns.
HARE_COLUMNS = ("hare-paper", "hare-paper:step3=start", "hare")
#: Verdict words (``words`` takes the one said first).
WORDS = (
    "not reproduced",
    "reproduced",
    "partly",
    "refuted",
    "holds",
    "fails",
    "measured",
    "input",
    "FAILED",
    "not run",
    "check failed",
)
RUN_LINES = ("This run:", "Rerun of")
#: What every percentage of the pages means: one definition each, used everywhere.
PERCENT = [
    "*Reduction* of A against B: 100 (1 - A / B) of the total weighted JCT, computed per "
    "seed on the same workload, then averaged over seeds, with its 95% Student-t interval "
    'in brackets; positive means A is lower (better). "A X% below B" says the same '
    'reduction, "X% above" its negative.',
    "*Change* of one policy from setting S to T (fig18, fig19, table3): its reduction "
    'at T against S, as above ("falls X%" is a reduction of X; "+X%" an increase, '
    "X% above).",
    "*Share* (fig13): the % of a run's jobs that finish within the limit, averaged over "
    "seeds. Tolerances on shares and on reductions are in percentage *points*.",
]


@dataclass
class Entry:
    """What the README shows of one item."""

    name: str
    title: str
    claim: str
    ours: str
    verdict: str


def words(verdict: str) -> dict[str, str]:
    """The verdict's word for each Hare it judges (``HARE_COLUMNS``), or for the item
    (key ``""``) when it is not judged per Hare."""

    def word(text: str) -> str:
        """The verdict word said first ("input ... not reproduced here" is an input);
        at one place the longer ("not reproduced" over "reproduced")."""
        low = text.strip()
        found = [
            (m.start(), -len(w), w)
            for w in WORDS
            if (m := re.search(rf"(^|\W){re.escape(w)}(\W|$)", low))
        ]
        return min(found)[2] if found else " ".join(low.split()[:4])

    parts = [p.split(": ", 1) for p in verdict.split(" / ")]
    if all(len(p) == 2 and p[0] in HARE_COLUMNS for p in parts):
        return {h: word(v) for h, v in parts}
    return {"": word(verdict)}


def one_line(claim: str) -> str:
    """The paper's sentence of a claim, without its ``[as data: ...]``."""
    return claim.split(" [as data")[0].strip()


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary(entries: list[Entry]) -> list[str]:
    lines = [
        "| item | the paper's claim | " + " | ".join(f"`{h}`" for h in HARE_COLUMNS) + " | other |",
        "| --- | --- | " + "--- | " * len(HARE_COLUMNS) + "--- |",
    ]
    counts: dict[str, dict[str, int]] = {h: {} for h in HARE_COLUMNS}
    for e in entries:
        w = words(e.verdict)
        for h in HARE_COLUMNS:
            if h in w:
                counts[h][w[h]] = counts[h].get(w[h], 0) + 1
        cols = [f"**{w[h]}**" if h in w else "-" for h in HARE_COLUMNS]
        lines.append(
            f"| [{e.name}](#{e.name}) | {_md(one_line(e.claim))} | "
            + " | ".join(cols)
            + f" | {'**' + w[''] + '**' if '' in w else '-'} |"
        )
    tally = [
        f"* `{h}`: **{c.get('reproduced', 0)} of {sum(c.values())} reproduced**"
        + "".join(f", {n} {w}" for w, n in sorted(c.items()) if w != "reproduced")
        for h, c in counts.items()
        if c
    ]
    others = [words(e.verdict)[""] for e in entries if "" in words(e.verdict)]
    if others:
        tally.append(
            f"* items judged once ({len(others)}): "
            + ", ".join(f"{others.count(w)} {w}" for w in sorted(set(others)))
        )
    return [
        "The paper's claims judged for each Hare (how many items of each verdict):",
        "",
        *tally,
        "",
        *lines,
    ]


def section(e: Entry) -> list[str]:
    def flat(text: str) -> str:
        return " ".join(str(text).split())

    return [
        f"### {e.name}",
        "",
        f"[figure]({e.name}.png) · [numbers]({e.name}.csv) · {flat(e.title)}",
        "",
        f"**Paper's claim.** {flat(e.claim)}",
        "",
        f"**Ours.** {flat(e.ours)}",
        "",
        f"**Verdict.** {flat(e.verdict)}",
        "",
    ]


def previous(path: Path) -> tuple[dict[str, Entry], list[str]]:
    """An existing README's items by name and its run lines."""
    if not path.exists():
        return {}, []
    text = path.read_text(encoding="utf-8")
    runs = [ln for ln in text.splitlines() if ln.startswith(RUN_LINES)]
    found = {}
    for m in re.finditer(
        r"^### ([\w-]+)\n\n\[figure\]\([^)]*\) · \[numbers\]\([^)]*\) · "
        r"(.*)\n\n\*\*Paper's claim\.\*\* (.*)\n\n\*\*Ours\.\*\* (.*)\n\n"
        r"\*\*Verdict\.\*\* (.*)$",
        text,
        flags=re.M,
    ):
        found[m.group(1)] = Entry(*m.groups())
    return found, runs


def provenance(version: dict[str, str] | None) -> str:
    """What the numbers were computed by, said exactly."""
    if not version:
        return ""
    listed = ", ".join(f"{fn} {v}" for fn, v in sorted(version.items()))
    return (
        " Provenance: a cell is reused only while every module it loaded has the same "
        "code as this checkout's (its syntax tree, docstrings aside: a comment or a "
        "reformatting changes no result) and every data file it read the same bytes, "
        "so each number here "
        "is what this checkout's code gives (wall-clock figures apart); `hare-opt "
        "reproduce --verify` recomputes a sample and fails on any difference "
        '(docs/reproduction.md, "What a cell is keyed on"). The package hashes at '
        "which the cells were computed (util/version.code_version, a hash of every "
        f"file of hare_opt/, by cell function): {listed}; this checkout's is "
        f"{code_version()}. A hash other than this checkout's means some other file of "
        "the package differed when the cell ran, none that the cell loaded."
    )


def run_line(outcomes: list[Any], quick: bool, version: dict[str, str] | None) -> str:
    total = sum(o.seconds for o in outcomes)
    shared = sum(o.shared for o in outcomes)
    cells = sum(o.cells for o in outcomes) - shared
    cached = sum(o.cached for o in outcomes) - shared
    computed = sum(o.cells - o.cached if o.computed is None else o.computed for o in outcomes)
    failed = sum(o.failed for o in outcomes)
    failed_items = [o.name for o in outcomes if o.verdict == "FAILED"]
    cpu = sum(o.cell_cpu_s for o in outcomes)
    wall = sum(o.cell_wall_s for o in outcomes)
    cost = (
        f"its {cells} cells took {cpu / 3600:.2f} CPU-hours to compute, whenever they "
        f"were computed (their own wall times add up to {wall / 3600:.2f} hours; a run "
        "on several workers takes less elapsed time); "
        if math.isfinite(cpu) and cpu > 0
        else ""
    )
    return (
        f"{'quick' if quick else 'full'} mode, {len(outcomes)} items; {cost}this run "
        f"computed {computed} and reused {cached} from the cell cache"
        + (f" ({shared} more listed by a second item, counted once)" if shared else "")
        + (f", {failed} FAILED" if failed else "")
        + f", in {total / 60:.1f} min of wall time."
        + (
            f" Items FAILED: {', '.join(failed_items)} (no result; see their sections)."
            if failed_items
            else ""
        )
        + provenance(version)
    )


def write_readme(
    path: Path,
    outcomes: list[Any],
    quick: bool,
    *,
    items: dict[str, Any],
    notes: list[str],
    keep: bool = False,
    version: dict[str, str] | None = None,
    flags: str = "",
) -> None:
    """Write the README; with ``keep``, sections of items not in this run stay;
    ``flags``: the command's options beyond ``--quick`` (a sensitivity run's regime)."""
    kept, earlier = previous(path) if keep else ({}, [])
    entries = dict(kept)
    for o in outcomes:
        entries[o.name] = Entry(o.name, o.title, o.claim, o.ours, o.verdict)
    for name, item in items.items():  # never a silent gap: an item not run says so
        entries.setdefault(name, Entry(name, item.title, item.claim, "not run", "not run"))
    ordered = [entries[name] for name in items]
    line = run_line(outcomes, quick, version)
    if kept:
        about = [
            *(earlier or ["This run: (earlier run)."]),
            f"Rerun of {', '.join(o.name for o in outcomes)} only: {line}",
        ]
    else:
        about = [
            f"This run: {line} What a run costs: docs/reproduction.md, "
            '"Cost of the regime"; `hare-opt reproduce --plan` says before any work.'
        ]
    lines = [
        "# Reproduction of the Hare paper (HPDC '22) with hare_opt",
        "",
        "Generated by `hare-opt reproduce" + (" --quick" if quick else "") + flags + "`; do not "
        "edit by hand. Each item has a figure (PNG) and its numbers (CSV). Claims are "
        "the paper's, paraphrased; times are in seconds unless a column says otherwise. "
        "*Reproduced*: our numbers are within the claim's stated tolerance; *partly*: "
        "its direction holds significantly, its numbers do not; *not reproduced*: "
        'neither (docs/reproduction.md, "Verdicts").',
        "",
        "## Summary",
        "",
        *summary(ordered),
        "",
        "What the percentages mean (each defined once; every item uses these):",
        "",
        *(f"* {d}" for d in PERCENT),
        "",
        "## The run",
        "",
    ]
    for a in about:
        lines += [a, ""]
    lines += ["## Items", ""]
    for e in ordered:
        lines += section(e)
    lines += ["## How these numbers were made", "", *notes, ""]
    atomic_write_text(path, "\n".join(lines) + "\n")
