"""Timing code the way ``torch.utils.benchmark`` does: ``Timer``, ``Measurement``, ``Compare``.

A :class:`Timer` runs a statement (a string, as :class:`timeit.Timer` takes it) with
``globals`` that include ``torch`` and ``lucid`` (both naming lucid, so a program ported with
only its imports changed times the same statements), at a fixed thread count (``num_threads``,
default 1, as torch), after a warm-up. ``timeit``, ``blocked_autorange`` and
``adaptive_autorange`` return a :class:`Measurement` (median, mean, IQR, the raw times, and
torch's printed summary); :class:`Compare` lays many of them out in torch's table, rows by
``sub_label`` (or statement), columns by ``description``, a block per ``label`` and thread
count. Where an accelerator backend is available the default timer waits for it before each
reading (``lucid.accelerator.synchronize``), as torch's does.

Callgrind instruction counts (``collect_callgrind``) and C++ statements need torch's C++
toolchain and are not offered: they raise ``NotImplementedError`` saying so.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import math
import textwrap
import timeit as _timeit
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

import lucid
from lucid import accelerator

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "select_unit",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds: below this a spread is timer noise
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer() -> float:
    """``timeit.default_timer``, after waiting for a present accelerator to finish its work."""
    if accelerator.is_available():
        accelerator.synchronize()
    return _timeit.default_timer()


class Language(enum.Enum):
    """The language of a statement: only ``PYTHON`` runs in lucid."""

    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a :class:`Timer` measures (everything but its globals); the key replicates merge on."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or a one-line statement), with the sub-label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup as the summary prints it (nothing for ``pass``)."""
        if self.setup in ("", "pass"):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's lines of a measurement's printed summary."""
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


_TASKSPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of a :class:`Timer` run: ``raw_times`` of blocks of ``number_per_run`` calls.

    Statistics are per call: ``times``, ``median``, ``mean``, ``iqr``; ``significant_figures``
    estimates the precision from the interquartile points (what :class:`Compare` trims to);
    the task's fields (``label``, ``stmt``, ``num_threads``, ...) read through.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # the caller's payload, never read here

    def __post_init__(self) -> None:
        self._sorted: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per call, one entry per timed block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        """Median seconds per call."""
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        """Mean seconds per call."""
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        """Interquartile range of the seconds per call."""
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Digits the interquartile points support (1 to 4), by a 90% confidence interval."""
        self._lazy_init()
        n = len(self._sorted)
        middle = np.asarray(self._sorted[n // 4 : math.ceil(3 * n / 4)], dtype=np.float64)
        interval = max(1.645 * float(middle.std()) / math.sqrt(len(middle)),
                       _MIN_CONFIDENCE_INTERVAL)  # fmt: skip
        figures = math.floor(math.log10(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the spread is large enough for the summary to warn about it."""
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether IQR / median is below ``threshold``."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        """The task's title."""
        return self.task_spec.title

    @property
    def env(self) -> str:
        """The task's ``env`` tag, or ``"Unspecified env"``."""
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The row a :class:`Compare` table puts this in: the sub-label, else the statement."""
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted:
            return
        self._sorted = tuple(sorted(self.times))
        arr = np.asarray(self._sorted, dtype=np.float64)
        self._median = float(np.quantile(arr, 0.5))
        self._mean = float(arr.mean())
        self._p25 = float(np.quantile(arr, 0.25))
        self._p75 = float(np.quantile(arr, 0.75))
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._warn("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._warn("This could indicate system fluctuation.")

    def _warn(self, why: str) -> None:
        share = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n"
            f"           {why}",
        )

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [
            object.__repr__(self),
            self.task_spec.summarize(),
            f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}",
        ]
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        threads = self.task_spec.num_threads
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pool replicates of the same task into one measurement each (per call, no metadata)."""
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``/``us``/``ms``/``s``) and its scale in seconds that print ``t`` best."""
    power = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(power, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def unit_to_english(u: str) -> str:
    """``"ms"`` -> ``"millisecond"``."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise ValueError(f"trim_sigfig(): n must be an integer, got {n!r}")
    if x == 0:
        return 0.0
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    before = lucid.get_num_threads()
    lucid.set_num_threads(n)
    try:
        yield
    finally:
        lucid.set_num_threads(before)


class Timer:
    """Time a Python statement: ``Timer(stmt, setup, globals=..., num_threads=1)``.

    As torch's Timer: statements are strings run by :class:`timeit.Timer` with ``globals`` (to
    which ``torch`` and ``lucid`` are added, both naming lucid); ``label``, ``sub_label``,
    ``description`` and ``env`` only label the results (:class:`Compare` groups by them);
    ``num_threads`` is the thread count while timing (default 1, not the process default).
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "Timer(language='cpp'): lucid times Python statements only (torch compiles C++ "
                "statements against libtorch, which lucid does not have)"
            )
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`."
            )
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"Timer(num_threads=...) expects an int >= 1, got {num_threads!r}")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", lucid)
        self._globals.setdefault("lucid", lucid)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label,
            sub_label=sub_label, description=description, env=env, num_threads=num_threads,
        )  # fmt: skip

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` calls, after a warm-up of ``number // 100`` (at least 2)."""
        with _threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not offered, as in torch: use :meth:`blocked_autorange`."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        """Not offered, as in torch: use :meth:`blocked_autorange`."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Calls per block: grow by 10x until the timer's overhead is under 0.01% of a block."""
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _loop(
        self,
        number: int,
        stop: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None,
        callback: Callable[[int, float], None] | None,
    ) -> list[float]:
        times: list[float] = []
        total, can_stop = 0.0, False
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback is not None:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], None] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of a size chosen so the timer's cost vanishes, until ``min_run_time`` is spent."""
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda _: True, min_run_time, None, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], None] | None = None,
    ) -> Measurement:
        """Blocks until IQR / median < ``threshold`` (after 4 blocks) or ``max_run_time``."""
        number = self._block_size(0.05)

        def stop(times: list[float]) -> bool:
            if len(times) <= 3:
                return False
            return Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        """Not offered: instruction counts need torch's valgrind bindings."""
        raise NotImplementedError(
            "Timer.collect_callgrind(): lucid has no Callgrind bindings; time with "
            "blocked_autorange() or adaptive_autorange() instead"
        )


def _clean(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Colorize(enum.Enum):
    """How :meth:`Compare.colorize` marks the fastest entries."""

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Compare:
    """Many measurements as torch's table: rows by sub-label, columns by description.

    ``print()`` or ``str()`` renders a block per label; inside it, rows grouped by thread
    count. ``trim_significant_figures()``, ``colorize(rowwise=False)`` and
    ``highlight_warnings()`` change the rendering as in torch.
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Iterable[Measurement]) -> None:
        """Add measurements (each must be a :class:`Measurement`)."""
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print each time only to the digits its spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each entry by its distance from the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark entries with a large spread with ``(! XX%)``."""
        self._highlight = True

    def print(self) -> None:
        """Print the table."""
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[Measurement]] = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            by_label[m.task_spec.label].append(m)
        return [self._table(group) for group in by_label.values()]

    def _table(self, results: list[Measurement]) -> str:
        unit, scale = select_unit(min(r.median for r in results))

        def row_key(m: Measurement) -> tuple[int, str, str]:
            return m.task_spec.num_threads, m.env, m.as_row_name

        rows = list(dict.fromkeys(row_key(m) for m in results))
        rows.sort(key=lambda k: k[:2])  # stable: statements keep their order
        cols = list(dict.fromkeys(m.task_spec.description for m in results))
        grid: list[list[Measurement | None]] = [[None] * len(cols) for _ in rows]
        for m in results:
            grid[rows.index(row_key(m))][cols.index(m.task_spec.description)] = m
        flat = [m for row in grid for m in row if m is not None]
        highlight = self._highlight and any(m.has_warnings for m in flat)
        envs = {m.env for m in flat}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0

        columns: list[list[Measurement]] = [
            [e for row in grid if (e := row[j]) is not None] for j in range(len(cols))
        ]
        # as torch: a column widens for "(! XX%)" marks only if one of its entries has one
        marks = [highlight and any(m.has_warnings for m in col) for col in columns]
        formats = [self._column_format(c, scale, k) for c, k in zip(columns, marks, strict=True)]
        header = [""] + [c or "" for c in cols]
        body: list[list[str]] = []
        prior_env = None
        for key, row in zip(rows, grid, strict=True):
            env = f"({key[1]})" if render_env and key[1] != prior_env else ""
            prior_env = key[1]
            cells = ["  " + env.ljust(env_len + 4 if render_env else 4) + key[2]]
            for entry, fmt, mark in zip(row, formats, marks, strict=True):
                cells.append(self._cell(entry, fmt, scale, mark))
            body.append(cells)
        widths = [max(len(r[j]) for r in [header, *body]) for j in range(len(header))]
        first = "  |  ".join(h.center(w) for h, w in zip(header, widths, strict=True))
        lines = [first]
        prior_threads = None
        for key, row, cells in zip(rows, grid, body, strict=True):
            if key[0] != prior_threads:
                lines.append(f"{key[0]} threads: ".ljust(len(first), "-"))
                prior_threads = key[0]
            lines.append(self._finish_row(key, row, cells, widths, grid, rows))
        label = results[0].task_spec.label or ""
        out = [f"[{(' ' + label + ' ').center(len(first) - 2, '-')}]", *lines, "",
               f"Times are in {unit_to_english(unit)}s ({unit}).", ""]  # fmt: skip
        text = "\n".join(out)
        if highlight:
            text += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return text

    def _column_format(self, col: list[Measurement], scale: float, highlight: bool) -> str:
        if not col:
            return "{:>1.1f}{:>0}"
        leading = [math.ceil(math.log10(m.median / scale)) for m in col]
        decimals = (min(max(m.significant_figures - d, 0) for m, d in zip(col, leading,
                        strict=True)) if self._trim else 1)  # fmt: skip
        length = max(leading) + decimals + (1 if decimals else 0)
        return f"{{:>{length}.{decimals}f}}{{:>{7 if highlight else 0}}}"

    def _cell(self, m: Measurement | None, fmt: str, scale: float, highlight: bool) -> str:
        if m is None:
            return " " * len(fmt.format(1.0, ""))
        value = m.median / scale
        if self._trim:
            value = trim_sigfig(value, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if highlight and m.has_warnings else ""
        return fmt.format(value, spread)

    def _finish_row(
        self,
        key: tuple[int, str, str],
        row: list[Measurement | None],
        cells: list[str],
        widths: list[int],
        grid: list[list[Measurement | None]],
        rows: list[tuple[int, str, str]],
    ) -> str:
        out = [cells[0].ljust(widths[0])]
        for j, (cell, m) in enumerate(zip(cells[1:], row, strict=True)):
            text = cell.center(widths[j + 1])
            if self._colorize is not Colorize.NONE and m is not None:
                if self._colorize is Colorize.ROWWISE:
                    best = min(r.median for r in row if r is not None)
                else:  # the best of this column among rows of the same thread count
                    same = [g[j] for g, k in zip(grid, rows, strict=True) if k[0] == key[0]]
                    best = min(r.median for r in same if r is not None)
                text = _colour(text, m.median, best)
            out.append(text)
        return "  |  ".join(out)


def _colour(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text
