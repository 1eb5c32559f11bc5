"""A second fuzz pass of the ``hare-opt`` command line: shapes of bad options, paths and
signals that no earlier fix was written for.

Same machinery as ``experiments/fuzz_cli.py`` (a fresh process in its own session per
case, against the checkout given by ``--root``), and every case is classified as one of

* ``ok`` / ``refusal``: behaved as expected (a refusal: exit 2, one line on stderr);
* ``traceback``: a Python traceback reached the user;
* ``hang``: no exit within the case's timeout;
* ``wrong``: a wrong acceptance or a wrong exit (accepted a bad input, exited 1 or -15
  where 2 or 130 was due, ...);
* ``lost``: a file the user had was destroyed or truncated, an output was left half
  written, a special file was replaced, or a temporary file was left behind;
* and, on top of these, ``orphans``: a process of the run's session outlived it.

    python experiments/fuzz_fresh.py [--root PATH] [--match TEXT] [--csv OUT]

Prints one line per case and the counts. Run it on two checkouts (a ``git worktree``
of an older commit next to this one) for a before/after comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_cli as fz  # noqa: E402  (the shared machinery)

HERE = Path(__file__).resolve().parents[1]
KINDS = ("ok", "refusal", "traceback", "hang", "wrong", "lost")
#: An interrupted command stops within this many seconds (generous: a shared machine).
PROMPT_S = 15.0


# --- checks ----------------------------------------------------------------------------


def _temps(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") and ".tmp" in p.name]


def intact(path: Path, old: bytes, *, parse: str | None = None) -> Callable[[fz.Run], str | None]:
    """``path`` is its old bytes, or (when the command succeeded or stopped after its
    output) a whole new file; nothing half written, no temporary file left next to it."""

    def check(run: fz.Run) -> str | None:
        left = _temps(path.parent)
        if left:
            return f"LOST: temporary files left: {left[:2]}"
        if not path.exists() and not path.is_symlink():
            return "LOST: the file is gone"
        data = path.read_bytes()
        return (
            None
            if data == old or whole(data, parse)
            else f"LOST: a half-written file ({len(data)} bytes)"
        )

    return check


def whole(data: bytes, kind: str | None) -> bool:
    """Whether ``data`` is a complete file of ``kind`` (json, csv or svg)."""
    if kind == "json":
        try:
            json.loads(data)
        except ValueError:
            return False
        return True
    if kind == "csv":
        return data.endswith(b"\n")
    if kind == "svg":
        return data.rstrip().endswith(b"</svg>")
    return True


def special(path: Path, test: Callable[[int], bool]) -> Callable[[fz.Run], str | None]:
    def check(run: fz.Run) -> str | None:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return "LOST: the special file is gone"
        return None if test(mode) else "LOST: a special file was replaced by a regular one"

    return check


def all_whole(folder: Path, pattern: str) -> Callable[[fz.Run], str | None]:
    """Every file the command wrote is complete (an interrupt may stop it between files)."""

    def check(run: fz.Run) -> str | None:
        if not folder.is_dir():
            return None
        left = _temps(folder)
        if left:
            return f"LOST: temporary files left: {left[:2]}"
        for p in folder.glob(pattern):
            try:
                json.loads(p.read_bytes())
            except ValueError:
                return f"LOST: {p.name} is half written"
        return None

    return check


def no_file(path: Path) -> Callable[[fz.Run], str | None]:
    def check(run: fz.Run) -> str | None:
        return f"wrote {path.name} though it refused" if run.code == 2 and path.exists() else None

    return check


def both(*checks: Callable[[fz.Run], str | None]) -> Callable[[fz.Run], str | None]:
    def check(run: fz.Run) -> str | None:
        for c in checks:
            why = c(run)
            if why:
                return why
        return None

    return check


# --- actions during a run ---------------------------------------------------------------


def sig(s: int, target: str = "group") -> Callable[[subprocess.Popen], None]:
    def act(proc: subprocess.Popen) -> None:
        (os.killpg if target == "group" else os.kill)(proc.pid, s)

    return act


def to_child(s: int) -> Callable[[subprocess.Popen], None]:
    """Signal one process of the run's session other than the command itself."""

    def act(proc: subprocess.Popen) -> None:
        for pid, _ in fz.session_members(proc.pid):
            if pid != proc.pid:
                os.kill(pid, s)
                return

    return act


# --- the cases --------------------------------------------------------------------------


def build(root: Path, w: Path) -> list[fz.Case]:
    fig1 = str(root / "instances" / "fig1.json")
    fig1c = str(root / "instances" / "fig1" / "c.schedule.json")
    tiny = str(root / "instances" / "tiny" / "tiny-05.json")
    hard = str(root / "instances" / "small" / "small-07.json")
    cases: list[fz.Case] = []

    def add(group: str, name: str, argv: list[str], **kw) -> None:
        cases.append(fz.Case(group, name, argv, **kw))

    # ---- options: shapes of bad values not tried before ------------------------------
    g = "options"
    for tl in ("1e-300", "0x10", "5s", "1_0", " ", "+inf", "-0", "604801", "٣", "²"):
        add(
            g,
            f"solve --time-limit {tl!r}",
            ["solve", fig1, "--solver", "cpsat", "--time-limit", tl],
            expect="any-clean",
        )
    for seed in ("9223372036854775808", "0" * 31 + "1", "1e3", "-0", "٣"):
        add(
            g,
            f"generate random --seed {seed!r}",
            ["generate", "random", "--seed", seed, "--out", str(w / "o-seed.json")],
            expect="any-clean",
        )
    for opt in (
        "seed=1 --option seed=2",
        "budget=[1]",
        'budget={"a": 1}',
        "budget=true",
        "log=yes",
        "threads=0",
        "threads=-1",
        "seed=1e3",
        "x=" + "[" * 5000 + "]" * 5000,
        "budget=" + "9" * 5000,
        "=",
        "budget==3",
        " budget = 5",
    ):
        add(
            g,
            f"solve hare --option {opt[:40]!r}",
            [
                "solve",
                fig1,
                "--solver",
                "hare",
                *sum((["--option", o] for o in opt.split(" --option ")), []),
            ],
            expect="any-clean",
        )
    for pol in ("hare,,hare", "HARE", "hare,hare", " ", "hare;fifo"):
        add(
            g,
            f"simulate --policies {pol!r}",
            ["simulate", "--instance", fig1, "--policies", pol, "--no-progress"],
            expect="any-clean",
        )
    for cl in (
        "V100:8,,T4:4",
        "V100:8@0",
        "V100:" + "9" * 20,
        " testbed ",
        "V100:1,V100:1",
        "V100:-1",
        "TESTBED",
        "V100:1@99999999999999999999",
    ):
        add(
            g,
            f"simulate --cluster {cl[:30]!r}",
            ["simulate", "--workload", "paper", "--jobs", "3", "--cluster", cl, "--no-progress"],
            expect="any-clean",
            timeout=90,
        )
    for mix in ("1:1:1", "1e308:1e308:1:1", "-1:1:1:1", "1:1:1:1:1", "a:b:c:d"):
        add(
            g,
            f"generate paper --mix {mix!r}",
            ["generate", "paper", "--mix", mix, "--out", str(w / "o-mix.json")],
        )
    for types in ("A,A", "a b", ",", "A," * 2000):
        add(
            g,
            f"generate random --types {types[:20]!r}",
            ["generate", "random", "--types", types, "--out", str(w / "o-types.json")],
            expect="any-clean",
        )
    add(
        g,
        "generate random with 10^10 tasks",
        [
            "generate",
            "random",
            "--jobs",
            "1000",
            "--rounds",
            "10000-10000",
            "--tasks-per-round",
            "1000-1000",
            "--out",
            str(w / "o-1e10.json"),
        ],
        expect="any-clean",
        timeout=120,
    )
    add(
        g,
        "falsify --min-gpus 2 --max-gpus 1",
        ["falsify", "--solver", "hare", "--min-gpus", "2", "--max-gpus", "1"],
    )
    add(
        g,
        "falsify --budget 1e-9",
        ["falsify", "--solver", "hare", "--budget", "1e-9", "--no-progress"],
        expect="any-clean",
    )
    add(
        g,
        "reproduce --only fig1,fig1 --workers 1025",
        ["reproduce", "--only", "fig1,fig1", "--workers", "1025", "--out", str(w / "r")],
    )
    add(
        g,
        "reproduce --cache a file",
        ["reproduce", "--only", "fig1", "--cache", fig1, "--out", str(w / "r")],
    )
    add(g, "demo --out-dir a file", ["demo", "--out-dir", fig1, "--time-limit", "1"])
    add(g, "bound a schedule file", ["bound", fig1c])
    add(g, "solve --help --bogus", ["solve", "--help", "--bogus"], expect="any-clean")
    add(g, "--version extra", ["--version", "extra"], expect="any-clean")
    add(g, "check --json --all (fine)", ["check", fig1, fig1c, "--json", "--all"], expect="verdict")
    for toml, label in (
        ('fn = "arith"\nseeds = 10000000000\n', "10^10 seeds"),
        ('fn = "arith"\nseeds = [1, "a"]\n', "a seed that is text"),
        (
            'fn = "arith"\nseeds = 1\n[grid]\nn = ['
            + ",".join(map(str, range(300)))
            + "]\nm = ["
            + ",".join(map(str, range(300)))
            + "]\n[fixed]\n",
            "a 90,000-cell grid",
        ),
        ('fn = "arith"\nseeds = 1\n[grid]\nn = []\n', "an empty grid axis"),
        ("\x00\x01\x02", "binary junk"),
    ):
        toml_file = w / f"t-{len(cases)}.toml"
        toml_file.write_text(toml)
        add(
            g,
            f"sweep: {label}",
            [
                "sweep",
                str(toml_file),
                "--out",
                str(w / f"sw-{len(cases)}"),
                "--workers",
                "1",
                "--no-progress",
            ],
            expect="any-clean",
            timeout=120,
        )

    # ---- paths: inputs and outputs of unusual kinds ---------------------------------------
    g = "paths"
    for name, path in (
        ("/dev/zero", "/dev/zero"),
        ("/dev/urandom", "/dev/urandom"),
        ("/dev/null (empty)", "/dev/null"),
        ("a folder", str(w)),
        ("a socket", str(w / "in.sock")),
        ("a symlink loop", str(w / "loop")),
        ("a dangling symlink", str(w / "dangling")),
        ("a path through a file", fig1 + "/x.json"),
    ):
        add(
            g,
            f"solve an instance that is {name}",
            ["solve", path, "--solver", "wspt"],
            timeout=30,
            mem_gb=1.5,
        )
        add(g, f"check a schedule that is {name}", ["check", fig1, path], timeout=30, mem_gb=1.5)
    add(
        g,
        "simulate --trace /dev/zero",
        ["simulate", "--workload", "philly", "--trace", "/dev/zero", "--no-progress"],
        timeout=30,
        mem_gb=1.5,
    )
    add(
        g,
        "sweep /dev/urandom",
        ["sweep", "/dev/urandom", "--out", str(w / "swz")],
        timeout=30,
        mem_gb=1.5,
    )
    # Never a system device as an output: a version that replaces special files would
    # replace the machine's. Our own device nodes stand in for them.
    outs = {
        "a copy of /dev/full": (str(w / "full-dev"), stat.S_ISCHR),
        "/proc/self/fd/1 (standard output)": ("/proc/self/fd/1", None),
        "a symlink to /dev/null": (str(w / "to-null"), None),
        "a symlink to a folder": (str(w / "to-dir"), None),
        "a symlink loop": (str(w / "loop"), None),
        "a name of 300 characters": (str(w / ("n" * 300 + ".json")), None),
        "a trailing slash": (str(w / "x.json") + "/", None),
        "a folder inside a file": (fig1 + "/x.json", None),
        ".": (".", None),
        "a socket": (str(w / "out.sock"), stat.S_ISSOCK),
        "a symlink to a named pipe nobody reads": (str(w / "to-fifo"), None),
    }
    for label, (path, keep) in outs.items():
        check = special(Path(path), keep) if keep else None
        add(
            g,
            f"solve --out {label}",
            ["solve", fig1, "--solver", "wspt", "--out", path],
            expect="any-clean",
            check=check,
            timeout=30,
        )
        add(
            g,
            f"generate --out {label}",
            ["generate", "random", "--out", path],
            expect="any-clean",
            check=check,
            timeout=30,
        )
    add(
        g,
        "plot --out a symlink to a .png (followed)",
        ["plot", fig1, fig1c, "--out", str(w / "chart-link.png")],
        expect="any-clean",
        check=lambda run: (
            None if (w / "chart-link.png").is_symlink() else "LOST: the symlink was replaced"
        ),
    )
    add(
        g,
        "generate --out-dir inside a file",
        ["generate", "random", "--count", "2", "--out-dir", fig1 + "/d"],
    )
    add(g, "generate --out-dir a file", ["generate", "random", "--count", "2", "--out-dir", fig1])
    add(
        g,
        "simulate --out the trace",
        [
            "simulate",
            "--workload",
            "philly",
            "--trace",
            str(w / "trace.csv"),
            "--out",
            str(w / "trace.csv"),
            "--jobs",
            "2",
            "--no-progress",
        ],
        check=intact(w / "trace.csv", (w / "trace.csv").read_bytes()),
    )
    add(
        g,
        "solve an instance named by a path with a newline",
        ["solve", str(w / "new\nline.json"), "--solver", "wspt"],
        expect="ok",
    )
    add(
        g,
        "refused solve leaves no output file",
        ["solve", fig1, "--solver", "cpsat", "--option", "bogus=1", "--out", str(w / "never.json")],
        check=no_file(w / "never.json"),
    )

    # ---- signals: other signals, several, to children, at other moments ---------------------
    # Times count from the end of start-up (measured before the cases are built): the
    # window before hare-opt's entry point runs is the package's imports, measured by
    # fuzz_cli.py's start-up cases.
    g = "signals"
    first = len(cases)
    out = w / "sig-existing.json"
    for s, t in (
        (signal.SIGINT, 0.8),
        (signal.SIGTERM, 1.2),
        (signal.SIGINT, 2.5),
        (signal.SIGTERM, 4.0),
    ):
        add(
            g,
            f"{s.name} at {t:g} s to solve --out existing (cpsat on small-07)",
            ["solve", hard, "--solver", "cpsat", "--time-limit", "30", "--out", str(out)],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=90,
            setup=lambda: out.write_text('{"old": true}'),
            check=intact(out, b'{"old": true}', parse="json"),
        )
    for s in (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
        add(
            g,
            f"{s.name} to the portfolio: no backend left, no half file",
            ["solve", hard, "--solver", "portfolio", "--time-limit", "30", "--out", str(out)],
            expect="any-kill",
            actions=[(6.0, sig(s, "pid"))],
            timeout=90,
            setup=lambda: out.write_text('{"old": true}'),
            check=intact(out, b'{"old": true}', parse="json"),
        )
    add(
        g,
        "three SIGINTs 0.4 s apart (the third ends it at once)",
        ["solve", hard, "--solver", "portfolio", "--time-limit", "60"],
        expect="interrupt",
        actions=[
            (6.0, sig(signal.SIGINT, "pid")),
            (6.4, sig(signal.SIGINT, "pid")),
            (6.8, sig(signal.SIGINT, "pid")),
        ],
        timeout=60,
    )
    add(
        g,
        "SIGSTOP 3 s then SIGCONT: the backends live on, the result is whole",
        ["solve", hard, "--solver", "portfolio", "--time-limit", "15", "--json"],
        expect="ok",
        actions=[(5.0, sig(signal.SIGSTOP, "pid")), (8.0, sig(signal.SIGCONT, "pid"))],
        timeout=90,
    )
    add(
        g,
        "SIGTERM to one portfolio backend: the others go on",
        ["solve", hard, "--solver", "portfolio", "--time-limit", "15", "--json"],
        expect="any-clean",
        actions=[(7.0, to_child(signal.SIGTERM))],
        timeout=90,
    )
    add(
        g,
        "SIGKILL to one sweep worker",
        [
            "sweep",
            str(w / "slow.toml"),
            "--out",
            str(w / "sw-kill"),
            "--workers",
            "2",
            "--no-progress",
        ],
        expect="any-exit",
        actions=[(5.0, to_child(signal.SIGKILL))],
        timeout=120,
    )
    for s, t in ((signal.SIGINT, 1.0), (signal.SIGTERM, 3.0)):
        folder = w / f"gen-{int(s)}"
        add(
            g,
            f"{s.name} at {t:g} s to generate --count 2000",
            ["generate", "random", "--count", "2000", "--jobs", "30", "--out-dir", str(folder)],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=90,
            check=all_whole(folder, "*.json"),
        )
    svg = w / "sig-chart.svg"
    for t in (3.0, 6.0):
        add(
            g,
            f"SIGTERM at {t:g} s to plot --out existing.svg (10^6 tasks)",
            ["plot", str(w / "big.json"), str(w / "big.schedule.json"), "--out", str(svg)],
            expect="interrupt-or-ok",
            actions=[(t, sig(signal.SIGTERM, "pid"))],
            timeout=120,
            setup=lambda: svg.write_text(fz.OLD_SVG),
            check=intact(svg, fz.OLD_SVG.encode(), parse="svg"),
        )
    csv_out = w / "sig-sim.csv"
    for t in (2.0, 4.0):
        add(
            g,
            f"SIGINT at {t:g} s to simulate --out existing.csv",
            [
                "simulate",
                "--workload",
                "paper",
                "--jobs",
                "200",
                "--policies",
                "hare,gavel-fifo,srtf",
                "--out",
                str(csv_out),
                "--no-progress",
            ],
            expect="interrupt-or-ok",
            actions=[(t, sig(signal.SIGINT))],
            timeout=120,
            setup=lambda: csv_out.write_text(fz.OLD_CSV),
            check=intact(csv_out, fz.OLD_CSV.encode(), parse="csv"),
        )
    for s, t in ((signal.SIGINT, 1.5), (signal.SIGTERM, 3.0)):
        add(
            g,
            f"{s.name} at {t:g} s to check --all (10^6 tasks)",
            ["check", str(w / "big2.json"), str(w / "big.schedule.json"), "--all"],
            expect="interrupt-or-verdict",
            actions=[(t, sig(s))],
            timeout=120,
        )
        add(
            g,
            f"{s.name} at {t:g} s to bound --strong paper-00",
            ["bound", str(root / "instances" / "paper" / "paper-00.json"), "--strong"],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=120,
        )
        add(
            g,
            f"{s.name} at {t:g} s to falsify --out existing",
            [
                "falsify",
                "--solver",
                "hare",
                "--budget",
                "30",
                "--no-progress",
                "--out",
                str(w / "fals.json"),
            ],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=120,
            setup=lambda: (w / "fals.json").write_text('{"old": 1}'),
            check=intact(w / "fals.json", b'{"old": 1}', parse="json"),
        )
        add(
            g,
            f"{s.name} at {t:g} s to demo",
            ["demo", "--out-dir", str(w / "demo"), "--time-limit", "5"],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=120,
            check=all_whole(w / "demo", "*.json"),
        )
        add(
            g,
            f"{s.name} at {t:g} s to simulate hare-paper",
            ["simulate", "--instance", tiny, "--policies", "hare-paper,hare", "--no-progress"],
            expect="interrupt-or-ok",
            actions=[(t, sig(s))],
            timeout=120,
        )
    add(
        g,
        "SIGINT twice 1 s apart to a sweep (stop, then stop now)",
        [
            "sweep",
            str(w / "slow.toml"),
            "--out",
            str(w / "sw-2x"),
            "--workers",
            "2",
            "--no-progress",
        ],
        expect="interrupt",
        actions=[(5.0, sig(signal.SIGINT)), (6.0, sig(signal.SIGINT))],
        timeout=90,
        check=all_whole(w / "sw-2x" / "cells" / "slow", "*.json"),
    )
    add(
        g,
        "SIGTERM to a sweep with the dask executor, then to its group",
        [
            "sweep",
            str(w / "slow.toml"),
            "--out",
            str(w / "sw-dask"),
            "--executor",
            "dask",
            "--workers",
            "2",
            "--no-progress",
        ],
        expect="interrupt",
        actions=[(10.0, sig(signal.SIGTERM, "pid")), (10.0, sig(signal.SIGTERM))],
        timeout=120,
    )
    for c in cases[first:]:
        c.actions = [(fz.STARTUP[0] + t, act) for t, act in c.actions]
    return cases


def write_inputs(root: Path, w: Path) -> None:
    fz.write_inputs(root, w)
    fz.write_review_inputs(root, w)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(w / "in.sock"))
    s.close()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(w / "out.sock"))
    s.close()
    for link, target in (
        ("dangling", "nowhere.json"),
        ("to-null", os.devnull),
        ("to-dir", str(w)),
        ("chart-link.png", "chart-target.png"),
    ):
        if not (w / link).is_symlink():
            os.symlink(target, w / link)
    os.symlink(w / "loop", w / "loop")
    os.mknod(w / "full-dev", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    os.mkfifo(w / "fifo")
    os.symlink(w / "fifo", w / "to-fifo")
    shutil.copy(root / "instances" / "fig1.json", w / "new\nline.json")


def classify(run: fz.Run) -> None:
    c = run.case
    extra = None
    if c.expect in ("any-kill", "any-exit") and run.code is not None:
        extra = c.check(run) if c.check else None
        if "Traceback (most recent call last)" in run.err + run.out:
            run.outcome, run.why = "traceback", run.err.strip().splitlines()[-1][:100]
        elif extra:
            run.outcome, run.why = ("lost" if extra.startswith("LOST") else "wrong"), extra
        else:
            run.outcome, run.why = "ok", f"exit {run.code}"
        return
    if c.expect == "interrupt-or-verdict":
        c.expect = "verdict" if run.code in (0, 1) else "interrupt"
    fz.classify(run)
    if run.outcome == "wrong" and run.why.startswith("LOST"):
        run.outcome = "lost"
    late = None if run.signal_sent_at is None or run.code is None else run.wall - run.signal_sent_at
    if run.outcome == "ok" and run.code == 130 and late is not None and late > PROMPT_S:
        run.outcome, run.why = "wrong", f"took {late:.0f} s to stop after the signal"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=HERE, help="checkout to test (default: this)")
    ap.add_argument("--match", default=None, help="only cases whose name contains this")
    ap.add_argument("--csv", type=Path, default=None, help="write one row per case here")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    work = Path(tempfile.mkdtemp(prefix="hare-fresh-"))
    try:
        write_inputs(root, work)
        fz.STARTUP[0] = fz.measure_startup(root)
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        print(f"root {root} (commit {commit}); start-up {fz.STARTUP[0]:.2f} s; work {work}")
        cases = build(root, work)
        if args.match:
            cases = [c for c in cases if args.match in c.name]
        runs = []
        for c in cases:
            t0 = time.perf_counter()
            run = fz.execute(c, root, work)
            classify(run)
            runs.append(run)
            orphan = f" ORPHANS {len(run.orphans)}" if run.orphans else ""
            print(
                f"[{run.outcome:9s}] {c.group:8s} {c.name[:62]:62s} "
                f"{time.perf_counter() - t0:6.1f}s {run.why[:90]}{orphan}",
                flush=True,
            )
        counts(runs)
        if args.csv:
            fz.write_csv(args.csv, runs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def counts(runs: list[fz.Run]) -> None:
    head = [
        "group",
        "cases",
        "ok",
        "clean refusals",
        "tracebacks",
        "hangs",
        "wrong acceptances",
        "lost files",
        "orphans",
    ]
    print("\n| " + " | ".join(head) + " |\n|" + " --- |" * len(head))
    groups = list(dict.fromkeys(r.case.group for r in runs))
    for g in [*groups, "all"]:
        rs = [r for r in runs if g == "all" or r.case.group == g]
        n = Counter(r.outcome for r in rs)
        print(
            f"| {g} | {len(rs)} | {n['ok']} | {n['refusal']} | {n['traceback']} | "
            f"{n['hang']} | {n['wrong']} | {n['lost']} | {sum(bool(r.orphans) for r in rs)} |"
        )


if __name__ == "__main__":
    sys.exit(main())
