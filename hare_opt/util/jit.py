"""numba kernels: loaded on first use, run as plain Python where numba would cost more, and
compiled with an on-disk cache that cannot go stale on a pinned dependency.

Why each part:

* **Loaded on first use.** Importing numba and loading a cached kernel costs about
  0.6 CPU s (numba's lowering registries import SciPy's BLAS wrappers on the first load),
  more than a whole ``hare`` search on the Fig. 1 toy. So ``@jit`` gives a ``Kernel``:
  the Python function, which becomes a numba dispatcher only when a caller first needs
  it compiled. numba is imported then, and every kernel declared so far gets its
  dispatcher at once (``load()``).
* **Interpreted runs.** Inside ``interpreted()`` a kernel that is not loaded yet runs
  as its Python function (its callees too): a solve of a tiny instance then never
  loads numba (``solvers.base.INTERPRET_TASKS`` decides). The kernels are written in
  numba's subset of Python and NumPy, so the Python run is the same computation
  (tests/test_interpreted.py compares the two schedule for schedule). Once loaded, a
  process runs them compiled. The block is process-wide, as loading numba is: while it
  is open, another thread's unloaded kernels run as Python too (slower, same answer).
* **Pins.** numba keys its cache on the text of the file that holds the compiled
  function only. A kernel that compiles in a rule from another module (the spec's start
  rule, another kernel module's helpers) would keep a stale copy after that rule is
  edited. So each kernel module creates its decorator with ``PinnedJit(rules, pin)``:
  the pin (the first 16 hex digits of the rules' source hash) lives in the kernel's own
  file, so editing a rule means editing the kernel file, and until the pin is updated
  caching is off (one warning, and a test fails).
* **Compile clock.** A compile (a cold cache: the first run after installing, or a new
  NUMBA_CACHE_DIR) is announced on stderr once per process; which groups of kernels
  load when, and compiling them all at once, is ``solvers.kernels``' business.
  ``compile_seconds`` counts the time spent compiling, so that a caller can keep it out
  of a time limit or report it (``stats.compile_s``). Loading from the cache is neither
  announced nor counted (numba raises its compile event only on a miss).
* **A cheaper compile.** numba hashes its compiler flags the slow way at every overload
  lookup, a tenth of a first run's compile; ``load()`` gives it the same hash computed
  once (``_hash_flags_once``; a test compares the two).
* **Callees.** numba gives every compiled function a CPython wrapper (to be called from
  Python) and a C wrapper (to be passed as a first-class function), each lowered,
  optimised and turned into machine code. A helper that only kernels call needs neither:
  ``@jit(callee=True)`` compiles it without them, and to LLVM IR only, which each
  caller links in (as numba compiles its own internal subroutines): about a seventh of a
  first run's compile. Callees are not cached on disk (their callers are). Called from Python
  once loaded, a callee raises ``TypeError`` (there is no wrapper to enter it by);
  tests/test_jit_callees.py checks that no callee is named outside kernels, and that
  every function only kernels name is a callee.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: One line on stderr when the process first compiles (a cold cache).
ANNOUNCEMENT = (
    "hare-opt: compiling numba kernels (a first run after installing, or a "
    "new cache folder; tens of seconds, once; not counted in time limits)"
)

_lock = threading.RLock()
#: Every kernel declared while numba was not loaded (they get their dispatchers in ``load``).
_pending: list[Kernel] = []
_loaded = False
#: ``interpreted()`` blocks open (any thread): unloaded kernels then run as Python.
_interpreting = 0
#: The plain-argument dispatcher class (``_plain_args_dispatcher``), once numba is imported.
_PlainArgs: type | None = None
#: The callees' dispatcher class (``_callee_dispatcher``), once numba is imported.
_Callee: type | None = None
#: Whether this thread is inside an interpreted kernel (``Kernel._interpret``).
_inside = threading.local()


class _CompileClock:
    """Seconds spent in top-level numba compiles (a kernel's callees compile inside it);
    registered with numba's event system when numba is loaded."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.announced = False
        self._depth: dict[int, int] = {}
        self._t0: dict[int, float] = {}
        self._lock = threading.Lock()

    def on_start(self, ev: Any) -> None:
        me = threading.get_ident()
        with self._lock:
            depth = self._depth.get(me, 0)
            self._depth[me] = depth + 1
            if depth:
                return
            self._t0[me] = time.perf_counter()
            first, self.announced = not self.announced, True
        if first:
            try:
                sys.stderr.write(ANNOUNCEMENT + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # no stderr (closed): nothing to announce on
                pass

    def on_end(self, ev: Any) -> None:
        me = threading.get_ident()
        with self._lock:
            self._depth[me] = self._depth.get(me, 1) - 1
            if self._depth[me] == 0:
                self.seconds += time.perf_counter() - self._t0.pop(me, time.perf_counter())


_clock = _CompileClock()


def _listen() -> None:
    """Register the compile clock with numba's events (once, when numba is loaded)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            _clock.on_start(ev)

        def on_end(self, ev: event.Event) -> None:
            _clock.on_end(ev)

    event.register("numba:compile", Listener())


def _hash_flags_once() -> None:
    """Make numba's compiler flags cheap to hash and compare (same values, same answers).

    numba keys its overload cache on the compiler's flags, and ``TargetConfig`` builds the
    dict of all its options through one property call each to hash or compare them:
    330,000 times in compiling the kernels, about a tenth of the compile's CPU. The
    replacements compute the same dict from the class's defaults and the set values (the
    properties' own rule), and the hash numba computes (of the sorted option names, which
    is all ``sorted`` of the dict yields) once per class. Nothing is replaced unless the
    replacement gives the original's values on a set of probes (another numba release)."""
    from numba.core import targetconfig
    from numba.core.compiler import Flags

    config = targetconfig.TargetConfig
    if getattr(config, "_hare_opt_fast", False):
        return
    original = config.values
    defaults: dict[type, dict[str, Any]] = {}
    hashes: dict[type, int] = {}

    def values(self: Any) -> dict[str, Any]:
        cls = type(self)
        base = defaults.get(cls)
        if base is None:
            base = defaults[cls] = {k: o.default for k, o in cls.options.items()}
        return {**base, **self._values}

    def hash_(self: Any) -> int:
        cls = type(self)
        h = hashes.get(cls)
        if h is None:
            h = hashes[cls] = hash(tuple(sorted(original(self))))
        return h

    def eq(self: Any, other: Any) -> bool:
        if isinstance(other, config):
            return values(self) == values(other)
        return NotImplemented

    try:
        probes = [Flags(), Flags()]
        # numba makes each option a property at class creation: mypy sees the Option
        probes[1].nrt = True  # type: ignore[misc, assignment]
        probes[1].no_cpython_wrapper = True  # type: ignore[misc, assignment]
        same = all(
            values(p) == original(p) and hash_(p) == hash(tuple(sorted(original(p))))
            for p in probes
        )
    except Exception:  # noqa: BLE001  # another numba's internals: keep its own methods
        same = False
    if same:
        config.values, config.__hash__, config.__eq__ = values, hash_, eq  # type: ignore[method-assign]
        config._hare_opt_fast, config._hare_opt_values = True, original  # type: ignore[attr-defined]


def compile_seconds() -> float:
    """Seconds this process has spent compiling numba kernels so far (0 on a warm cache)."""
    with _clock._lock:
        running = sum(time.perf_counter() - t for t in _clock._t0.values())
        return _clock.seconds + running


def loaded() -> bool:
    """Whether numba and the kernels' dispatchers are loaded in this process."""
    return _loaded


def load() -> None:
    """Import numba and give every kernel declared so far its dispatcher (nothing compiles
    yet: a dispatcher compiles, or loads from the cache, on its first call).

    Each kernel module's namespace then holds the dispatchers in place of the ``Kernel``
    objects, because numba compiles a kernel's calls through the globals it sees; callers
    elsewhere that imported a ``Kernel`` reach its dispatcher through it."""
    global _loaded
    with _lock:
        if _loaded:
            return
        _listen()
        _hash_flags_once()
        for kernel in _pending:
            kernel._dispatcher = kernel.owner.compiled(kernel.py_func, kernel.options)
        spaces = {id(k.py_func.__globals__): k.py_func.__globals__ for k in _pending}
        for space in spaces.values():
            for name, value in list(space.items()):
                if isinstance(value, Kernel) and value._dispatcher is not None:
                    space[name] = value._dispatcher
        _pending.clear()
        _loaded = True


@contextlib.contextmanager
def interpreted(active: bool = True) -> Iterator[bool]:
    """Within the block, kernels not loaded yet run as their Python functions (with
    ``active``); yields whether that is so (False once numba is loaded)."""
    global _interpreting
    if not active:
        yield False
        return
    with _lock:
        _interpreting += 1
    try:
        yield not _loaded
    finally:
        with _lock:
            _interpreting -= 1


def interpreting() -> bool:
    """Whether kernels run as Python right now (an ``interpreted()`` block, nothing loaded)."""
    return _interpreting > 0 and not _loaded


class Kernel:
    """A kernel before numba is loaded: the Python function and its numba options."""

    def __init__(self, fn: Callable[..., Any], options: dict[str, Any], owner: PinnedJit):
        self.py_func, self.options, self.owner = fn, options, owner
        self._dispatcher: Any = None
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__module__ = getattr(fn, "__module__", __name__)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._python: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        d = self._dispatcher
        if d is not None:
            return d(*args)
        if _interpreting and not _loaded:
            return self._interpret(args)
        load()
        return self._dispatcher(*args)

    def _interpret(self, args: tuple[Any, ...]) -> Any:
        """The Python function; on the outermost call NumPy's integer overflow wraps
        silently, as it does compiled (the kernels' hashes rely on it)."""
        fn = self._python or self._plain()
        if getattr(_inside, "kernel", False):
            return fn(*args)
        _inside.kernel = True
        try:
            with np.errstate(over="ignore"):
                return fn(*args)
        finally:
            _inside.kernel = False

    def _plain(self) -> Callable[..., Any]:
        """The Python function bound to a copy of its module's namespace in which every
        kernel of that module is its plain Python function too, so that an interpreted
        kernel calls its module's kernels without this wrapper (80,000 calls on the
        Fig. 1 toy; numba, too, reads a kernel's globals as constants). Made once for
        all the module's kernels."""
        with _lock:
            if self._python is None:
                space = self.py_func.__globals__
                plain = dict(space)
                for name, k in space.items():
                    if isinstance(k, Kernel) and k.py_func.__globals__ is space:
                        if k._python is None:
                            f = k.py_func
                            k._python = types.FunctionType(
                                f.__code__, plain, f.__name__, f.__defaults__, f.__closure__
                            )
                            k._python.__kwdefaults__ = f.__kwdefaults__
                        plain[name] = k._python
                if self._python is None:  # not a module-level name (a local kernel)
                    self._python = self.py_func
            return self._python

    def __get__(self, obj: Any, cls: Any = None) -> Any:  # bound as a method, as numba's is
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name: str) -> Any:  # the dispatcher's own attributes
        if name.startswith("__") or name in ("py_func", "options", "owner", "_dispatcher"):
            raise AttributeError(name)
        load()
        return getattr(self._dispatcher, name)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"


def source_pin(*fns: Callable[..., Any]) -> str:
    """First 16 hex digits of the sha256 of the functions' sources, one after another
    ("" if one has none); a kernel counts by its Python source."""
    try:
        text = "".join(inspect.getsource(getattr(fn, "py_func", fn)) for fn in fns)
    except OSError:  # no source: numba could not cache anyway
        return ""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain_args_dispatcher() -> type:
    """numba's CPU dispatcher, made to compile a kernel called from another for its
    arguments' plain types (defined when numba is imported, on first need).

    numba types a constant argument (``f(h, n, 0)``), or a variable while its first
    assignment is all the typer has seen of it, as a literal, and compiles the callee
    once for that literal type and again for ``int64`` (2.5 s for ``place_round``).
    Compiling the plain type only changes no result: the callee computes the same on
    the same ints, and the caller's constant still reaches it when LLVM inlines the call.
    """
    global _PlainArgs
    if _PlainArgs is None:
        from numba.core import types as ntypes
        from numba.core.registry import CPUDispatcher

        class PlainArgs(CPUDispatcher):
            def get_call_template(self, args: Any, kws: Any) -> Any:
                args = tuple(ntypes.unliteral(a) for a in args)
                plain = {k: ntypes.unliteral(v) for k, v in kws.items()}
                return super().get_call_template(args, plain)

        _PlainArgs = PlainArgs
    return _PlainArgs


def _link_only(library: Any) -> None:
    """Make a code library finalize without machine code of its own: its LLVM IR is still
    optimised and linked into each kernel that calls it (whose machine code holds it);
    nothing ever asks for the library's own symbols (a callee has no wrapper to enter
    by and is not cached)."""

    def finalize_final_module() -> None:
        library._finalize_dynamic_globals()
        library._verify_declare_only_symbols()
        library._finalized = True

    library._finalize_final_module = finalize_final_module


def _lowered_only() -> bool:
    """Whether this numba has the internals a link-only callee uses (else callees are
    compiled as numba's ``@overload`` implementations are: no wrappers, own machine code)."""
    from numba.core.base import BaseContext
    from numba.core.codegen import CPUCodeLibrary
    from numba.core.compiler import CompileResult

    need = ("_finalize_final_module", "_finalize_dynamic_globals", "_verify_declare_only_symbols")
    return (
        all(hasattr(CPUCodeLibrary, n) for n in need)
        and hasattr(BaseContext, "insert_user_function")
        and hasattr(CompileResult, "_replace")
    )


def _callee_dispatcher() -> type:
    """The plain-argument dispatcher of a callee (``@jit(callee=True)``).

    Compiled without the CPython and C wrappers and, as numba compiles its own internal
    subroutines (``BaseContext.compile_subroutine``), only to LLVM IR (``no_compile``):
    each caller links the IR in and makes the machine code. numba's dispatcher expects an
    entry point to key the callee's implementation on, so the overload gets a key object
    of its own. A call from Python would enter code that is not there: it raises."""
    global _Callee
    if _Callee is None:
        lowered = _lowered_only()

        class Callee(_plain_args_dispatcher()):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kws: Any) -> None:
                super().__init__(*args, **kws)
                if lowered:
                    self._compiler._customize_flags = self._lower_only

            @staticmethod
            def _lower_only(flags: Any) -> Any:
                flags.no_compile = True
                return flags

            def add_overload(self, cres: Any) -> None:
                if not lowered:
                    super().add_overload(cres)
                    return
                cres = cres._replace(entry_point=object())
                self.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
                _link_only(cres.library)
                self.overloads[tuple(cres.signature.args)] = cres

            def __call__(self, *args: Any, **kws: Any) -> Any:
                raise TypeError(
                    f"{self.py_func.__module__}.{self.py_func.__qualname__} is compiled "
                    "for calls from numba kernels only (@jit(callee=True)): call the "
                    "kernel that uses it, or its .py_func"
                )

        _Callee = Callee
    return _Callee


def _compiled(fn: Callable[..., Any], cache: bool, options: dict[str, Any]) -> Any:
    """``njit(fn, cache=cache, **options)`` with the plain-argument dispatcher (as numba's
    ``_jit`` builds one); a callee's without wrappers."""
    from numba.core import config

    if config.DISABLE_JIT:  # type: ignore[attr-defined]  # (set at run time, as numba does)
        return fn
    options = dict(options)
    kind = _plain_args_dispatcher()
    if options.pop("callee", False):  # not cached: its callers' machine code holds it
        options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
        kind, cache = _callee_dispatcher(), False
    targetoptions = {"nopython": True, "boundscheck": None, **options}
    disp = kind(py_func=fn, locals={}, targetoptions=targetoptions)
    if cache:
        disp.enable_caching()
    return disp


class PinnedJit:
    """``njit(cache=True)`` while the pins hold and a cache folder is writable, else ``njit``;
    a ``Kernel`` until numba is loaded (see the module docstring).

    numba raises at decoration when no cache folder is writable; a read-only install
    must still run, so the decorator then compiles in every process (one warning). A
    kernel that compiles in no other module's rule passes ``()`` (the pin of nothing).
    """

    def __init__(
        self, rule: Callable[..., Any] | tuple[Callable[..., Any], ...], pin: str, owner: str
    ):
        self.rules = rule if isinstance(rule, tuple) else (rule,)
        self.cache = source_pin(*self.rules) == pin
        self.pin, self.owner = pin, owner
        if not self.cache:
            names = ", ".join(getattr(r, "__qualname__", str(r)) for r in self.rules)
            warnings.warn(
                f"hare_opt: {names} differ from their pin in {owner}: "
                "numba cache off until the pin is updated",
                RuntimeWarning,
                stacklevel=2,
            )

    def __call__(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        if fn is None:
            return lambda f: self(f, **options)
        with _lock:
            if _loaded:
                return self.compiled(fn, options)
            kernel = Kernel(fn, options, self)
            _pending.append(kernel)
            return kernel

    def compiled(self, fn: Callable[..., Any], options: dict[str, Any]) -> Any:
        """numba's dispatcher of ``fn`` (cached on disk when the pin holds)."""
        if self.cache:
            try:
                return _compiled(fn, True, options)
            except RuntimeError as exc:  # "cannot cache function ...: no locator available"
                self.cache = False
                warnings.warn(
                    f"hare_opt: numba cache unavailable, compiling in every process ({exc})",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return _compiled(fn, False, options)

    @property
    def pinned(self) -> bool:
        """Whether the rules' sources still match the pin (a test asserts it)."""
        return source_pin(*self.rules) == self.pin


def prepare() -> None:
    """Import numba and its typing and lowering registries (numba imports them on a first
    compile or cache load) in the calling thread, and load the kernels' dispatchers: a
    caller that then loads kernels in a worker it may let go of at a signal
    (``solvers.kernels.KernelLoader.load_during``) leaves that worker nothing to import
    while the command ends."""
    load()
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()
