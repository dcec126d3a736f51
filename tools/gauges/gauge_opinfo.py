"""Gauges 1 and 3: torch's OpInfo `sample_inputs` and `error_inputs`, through torch and lucid."""

from __future__ import annotations

import fnmatch
import inspect
import itertools
import re
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import gauge_bridge as bridge
import numpy as np
import torch
from gauge_bridge import GaugeTimeout, ToLucid, Unconvertible, time_limit
from gauge_common import (
    KINDS,
    Deliberate,
    Verdict,
    compare_grads,
    compare_outputs,
    exception_kind,
    percent,
    short_error,
)

import lucid

SAMPLE_SECONDS = 20.0  # one sample's torch + lucid calls; past it the sample is an error
DTYPES = (torch.float32, torch.int64, torch.bool)
EXAMPLES_PER_KIND = 3  # failing samples kept in the JSON per op and kind (run.py --examples)

# Entries left out of the gauge, with the reason printed in the report.
EXCLUDED_PREFIXES = {
    "torch.ops.": "an aten operator, not public API",
    "_": "private (aten) operator",
    "jiterator_": "CUDA jiterator",
}
EXCLUDED_NAMES = {
    "cfloat": "complex-only: the complex-and-FFT issue",
    "cdouble": "complex-only: the complex-and-FFT issue",
    "to_sparse": "sparse layout",
    "slice": "an aten operator (torch.ops.aten.slice), not public API",
    "max_pool2d_with_indices_backward": "an aten backward operator, not public API",
    "native_dropout_backward": "an aten backward operator, not public API",
}


# Ops whose values are not defined (uninitialised memory): only shapes and dtypes compare.
UNDEFINED_VALUES = {
    "empty",
    "empty_like",
    "empty_strided",
    "empty_permuted",
    "new_empty",
    "new_empty_strided",
}


# Random ops (also found at run time, when torch or lucid differs from itself under another
# seed; torch's test lambdas seed torch themselves): only shapes and dtypes compare.
RANDOM = re.compile(
    r"dropout|bernoulli|multinomial|rrelu|(^|\.)normal$|uniform|^rand|cauchy|exponential|"
    r"geometric|log_normal|poisson|fractional_max_pool"
)
# Ops returning indices of equal elements where any is right (ties): output positions.
TIE_INDEX_OUTPUTS = {
    "sort": 1,
    "argsort": 0,
    "topk": 1,
    "kthvalue": 1,
    "mode": 1,
    "median": 1,
    "nanmedian": 1,
    "max": 1,
    "min": 1,
    "cummax": 1,
    "cummin": 1,
    "argmax": 0,
    "argmin": 0,
}


def tie_ambiguous(op: Any, sample: Any, expected: list[Any], got: list[Any]) -> bool:
    """A value mismatch only in the index output of an op whose input has equal elements."""
    position = TIE_INDEX_OUTPUTS.get(op.name)
    if position is None or len(expected) != len(got) or position >= len(expected):
        return False
    values = sample.input.detach().numpy(force=True) if hasattr(sample.input, "numel") else None
    if values is None or np.unique(values).size == values.size:
        return False
    others = [i for i in range(len(expected)) if i != position]
    rest = compare_outputs([expected[i] for i in others], [got[i] for i in others])
    index = compare_outputs([expected[position]], [got[position]])
    return rest.kind == "pass" and index.kind == "value"


def excluded_reason(op: Any) -> str | None:
    """Why an op_db entry is not gauged, or None."""
    if op.name in EXCLUDED_NAMES:
        return EXCLUDED_NAMES[op.name]
    for prefix, why in EXCLUDED_PREFIXES.items():
        if op.name.startswith(prefix) and not op.name.startswith("__"):
            return why
    if type(op.op).__name__ in ("OpOverload", "OpOverloadPacket", "_JittedFunction"):
        return "an aten operator, not public API"
    if not any(d in op.supported_dtypes("cpu") for d in DTYPES):
        return "no float32/int64/bool support on CPU (complex or low precision only)"
    return None


def torch_path(op: Any) -> str:
    """The public torch name of an entry: torch.x, torch.nn.functional.x or torch.Tensor.x."""
    target: Any = torch
    for part in op.name.split("."):
        target = getattr(target, part, None)
        if target is None:
            break
    if callable(target) and not op.name.startswith("__"):  # not torch.float (a dtype)
        return f"torch.{op.name}"
    return f"torch.Tensor.{op.name}"


@dataclass
class Caller:
    """How one op_db entry is called in lucid."""

    path: str  # lucid's name, e.g. lucid.nn.functional.relu or lucid.Tensor.expand
    function: Callable[..., Any] | None  # None: a Tensor method, looked up on the input
    method: str = ""
    from_test_lambda: bool = False

    def missing(self) -> bool:
        """Whether lucid lacks the name (a test lambda reports it when called)."""
        if self.function is not None or self.from_test_lambda:
            return False
        return not hasattr(lucid.Tensor, self.method)

    def __call__(self, sample_input: Any, args: Iterable[Any], kwargs: dict[str, Any]) -> Any:
        if self.function is not None:
            return self.function(sample_input, *args, **kwargs)
        if not isinstance(sample_input, lucid.Tensor):  # torch.Tensor.x(2, t): unbound, too
            return getattr(lucid.Tensor, self.method)(sample_input, *args, **kwargs)
        return getattr(sample_input, self.method)(*args, **kwargs)


_GLOBALS_CACHE: dict[int, dict[str, Any]] = {}


def lucid_caller(op: Any) -> Caller:
    """Map an entry to lucid: test lambdas re-bound to lucid, torch.x -> lucid.x, methods."""
    path = torch_path(op)
    lucid_path = "lucid." + path.removeprefix("torch.")
    fn = op.op
    if isinstance(fn, types.FunctionType) and fn.__module__.startswith("torch.testing"):
        rebound = bridge.rebind_torch(fn, _GLOBALS_CACHE)
        return Caller(lucid_path, rebound, from_test_lambda=True)
    if path.startswith("torch.Tensor."):
        return Caller(lucid_path, None, method=op.name)
    target: Any = lucid
    for part in path.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return Caller(lucid_path, None, method="")
    return Caller(lucid_path, target)


@dataclass
class OpResult:
    """One op_db entry's tally."""

    name: str
    variant: str
    torch: str
    lucid: str
    counts: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def samples(self) -> int:
        return sum(self.counts.values())

    @property
    def status(self) -> str:
        if not self.samples:
            return "no samples"
        if self.counts["pass"] == self.samples:
            return "pass"
        if self.counts["missing"] == self.samples:
            return "missing"
        return "partial"

    def record(self, verdict: Verdict, dtype: torch.dtype, desc: str) -> None:
        self.counts[verdict.kind] += 1
        shown = sum(1 for e in self.examples if e["kind"] == verdict.kind)
        if verdict.kind != "pass" and shown < EXAMPLES_PER_KIND:
            self.examples.append(
                {
                    "kind": verdict.kind,
                    "dtype": str(dtype).removeprefix("torch."),
                    "sample": desc,
                    "detail": verdict.detail,
                }
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "op": self.name,
            "variant": self.variant,
            "torch": self.torch,
            "lucid": self.lucid,
            "status": self.status,
            "counts": dict(self.counts),
            "skipped": dict(self.skipped),
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
        }


def describe(sample: Any) -> str:
    """A short text for a sample: its shapes and non-tensor arguments."""

    def one(o: Any) -> str:
        if isinstance(o, torch.Tensor):
            return f"T{tuple(o.shape)}{'' if o.is_contiguous() else 'nc'}"
        if isinstance(o, list | tuple):
            return "[" + ",".join(one(x) for x in o[:4]) + ("...]" if len(o) > 4 else "]")
        return repr(o)[:30]

    parts = [one(sample.input)] + [one(a) for a in sample.args]
    parts += [f"{k}={one(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)[:200]


def _process(fn: Any, out: Any, lucid_side: bool) -> Any:
    if lucid_side:
        fn = bridge.rebind_torch(fn, _GLOBALS_CACHE)
    return fn(out)


def run_sample(op: Any, caller: Caller, sample: Any, index: int) -> Verdict | str:
    """One sample's verdict, or a string: the reason it is skipped."""
    everything = (sample.input, sample.args, sample.kwargs)
    if bridge.count_elements(everything) > bridge.MAX_ELEMENTS:
        return "more than 1e6 elements"
    convert = ToLucid()
    try:
        l_in, l_args, l_kwargs = convert(everything)
    except bridge.MissingName as exc:
        return Verdict("missing", str(exc))
    except Unconvertible as exc:
        return f"unconvertible: {exc}"
    spare = bridge.clone_torch(everything)
    spare_lucid = bridge.clone_torch(everything)
    torch.manual_seed(0)
    try:
        with time_limit(SAMPLE_SECONDS):
            t_out = op(sample.input, *sample.args, **sample.kwargs)
    except GaugeTimeout:
        return "torch timed out"
    except Exception:
        return "torch raises"
    try:
        with time_limit(SAMPLE_SECONDS):
            l_out = caller(l_in, l_args, l_kwargs)
    except GaugeTimeout as exc:
        return Verdict("error", str(exc))
    except Exception as exc:
        return Verdict(exception_kind(exc), short_error(exc))
    try:
        expected, got = bridge.leaves(t_out), bridge.leaves(l_out)
        random = op.name in UNDEFINED_VALUES or RANDOM.search(op.name) is not None
        verdict = compare_outputs(expected, got, values=not random)
        if verdict.kind == "value" and tie_ambiguous(op, sample, expected, got):
            return "ties: the indices of equal elements are ambiguous"
        if verdict.kind in ("value", "gradient") and not random:
            # a random op: torch itself differs under another seed; compare shapes and dtypes
            # (torch's test lambdas seed torch themselves: then lucid differs from itself)
            with time_limit(SAMPLE_SECONDS):
                torch.manual_seed(1)
                again = op(spare[0], *spare[1], **spare[2])
                l_in2, l_args2, l_kwargs2 = ToLucid()(spare_lucid)
                l_again = caller(l_in2, l_args2, l_kwargs2)
            if (
                compare_outputs(expected, bridge.leaves(again)).kind != "pass"
                or compare_outputs(got, bridge.leaves(l_again)).kind != "pass"
            ):
                random = True
                verdict = compare_outputs(expected, got, values=False)
        process = sample.output_process_fn_grad
        if verdict.kind == "value" and process is not None:
            try:
                processed = compare_outputs(
                    bridge.leaves(process(t_out)), bridge.leaves(_process(process, l_out, True))
                )
                verdict = processed if processed.kind == "pass" else verdict
            except Exception:
                pass
        if verdict.kind != "pass" or random or not convert.grad_pairs:
            return verdict
        with time_limit(SAMPLE_SECONDS):
            try:
                t_proc, l_proc = process(t_out), _process(process, l_out, True)
            except Exception:
                t_proc, l_proc = t_out, l_out
            grads = bridge.input_grads(t_proc, l_proc, convert.grad_pairs, seed=index)
        if grads is None:
            return verdict
        expected_g, got_g = grads
        if isinstance(got_g, str):
            return Verdict("gradient", got_g)
        return compare_grads(expected_g, got_g)
    except GaugeTimeout as exc:
        return Verdict("error", f"comparison {exc}")
    except Exception as exc:
        return Verdict("error", f"comparing: {short_error(exc)}")


def select(entries: Iterable[Any], patterns: list[str] | None) -> list[Any]:
    """The entries whose name matches one of the fnmatch `patterns` (all when None)."""
    if not patterns:
        return list(entries)
    return [e for e in entries if any(fnmatch.fnmatchcase(e.name, p) for p in patterns)]


def gauge_opinfo(
    deliberate: Deliberate,
    patterns: list[str] | None = None,
    max_samples: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every selected op_db entry's samples; the JSON section and its summary numbers."""
    from torch.testing._internal.common_methods_invocations import op_db

    results: list[OpResult] = []
    excluded: list[dict[str, str]] = []
    deliberate_ops: list[dict[str, str]] = []
    for op in select(op_db, patterns):
        why = excluded_reason(op)
        if why:
            excluded.append({"op": op.name, "variant": op.variant_test_name, "reason": why})
            continue
        caller = lucid_caller(op)
        path = torch_path(op)
        reason = deliberate.reason(path)
        if reason:
            deliberate_ops.append({"op": op.name, "torch": path, "reason": reason})
            continue
        result = OpResult(op.name, op.variant_test_name, path, caller.path)
        start = time.perf_counter()
        missing = caller.missing() or (caller.function is None and not caller.method)
        supported = op.supported_dtypes("cpu")
        for dtype in DTYPES:
            if dtype not in supported:
                continue
            grad = dtype.is_floating_point and op.supports_autograd
            torch.manual_seed(0)  # sample_inputs draws from torch's global generator
            try:
                with time_limit(60):
                    samples = list(
                        itertools.islice(
                            op.sample_inputs("cpu", dtype, requires_grad=grad), max_samples
                        )
                    )
            except (Exception, GaugeTimeout) as exc:
                result.skipped[f"sample_inputs raises {type(exc).__name__}"] += 1
                continue
            for index, sample in enumerate(samples):
                if missing:
                    result.record(Verdict("missing", f"no {caller.path}"), dtype, "")
                    continue
                try:
                    verdict = run_sample(op, caller, sample, index)
                except (Exception, GaugeTimeout) as exc:
                    verdict = Verdict("error", f"gauge: {short_error(exc)}")
                if isinstance(verdict, str):
                    result.skipped[verdict] += 1
                else:
                    result.record(verdict, dtype, describe(sample))
        result.seconds = time.perf_counter() - start
        results.append(result)
        if progress:
            progress(f"{op.name}.{op.variant_test_name} {dict(result.counts)}")
    return summarise_ops(results, excluded, deliberate_ops, max_samples)


def summarise_ops(
    results: list[OpResult],
    excluded: list[dict[str, str]],
    deliberate_ops: list[dict[str, str]],
    max_samples: int | None,
) -> dict[str, Any]:
    """The OpInfo section: totals by kind, per-op records, what was left out."""
    totals: Counter[str] = Counter()
    for r in results:
        totals.update(r.counts)
    samples = sum(totals.values())
    gauged = [r for r in results if r.samples]
    present = [r for r in gauged if r.status != "missing"]
    present_samples = sum(r.samples for r in present)
    summary = {
        "entries": len(results),
        "ops_with_samples": len(gauged),
        "ops_all_pass": sum(1 for r in gauged if r.status == "pass"),
        "ops_missing": sum(1 for r in gauged if r.status == "missing"),
        "samples": samples,
        "samples_pass": totals["pass"],
        "samples_pass_pct": percent(totals["pass"], samples),
        "present_samples_pass_pct": percent(totals["pass"], present_samples),
        "by_kind": {k: totals[k] for k in KINDS},
        "excluded": len(excluded),
        "deliberate": len(deliberate_ops),
        "max_samples_per_dtype": max_samples,
    }
    return {
        "summary": summary,
        "ops": [r.as_json() for r in results],
        "excluded": excluded,
        "deliberate": deliberate_ops,
    }


# --- gauge 3: error inputs ---------------------------------------------------------------


def gauge_errors(
    deliberate: Deliberate,
    patterns: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """For each error input torch rejects: does lucid raise, and the same exception class?"""
    from torch.testing._internal.common_methods_invocations import op_db

    counts: Counter[str] = Counter()
    messages: Counter[str] = Counter()  # of same-class raises: torch's message pattern matched
    per_op: list[dict[str, Any]] = []
    for op in select(op_db, patterns):
        if op.error_inputs_func is None or excluded_reason(op):
            continue
        path = torch_path(op)
        if deliberate.reason(path):
            continue
        caller = lucid_caller(op)
        try:
            with time_limit(60):
                inputs = list(op.error_inputs("cpu"))
        except (Exception, GaugeTimeout):
            continue
        tally: Counter[str] = Counter()
        examples: list[dict[str, str]] = []
        for error_input in inputs:
            try:
                outcome, detail = run_error_input(op, caller, error_input)
            except (Exception, GaugeTimeout):
                continue  # the gauge could not set the input up (noted by its absence)
            if outcome is None:
                continue
            tally[outcome] += 1
            if outcome == "returned" and detail.startswith("torch raises Exception ()"):
                messages["returned_generic"] += 1
            if outcome == "same_class":
                messages["same" if not detail else "different"] += 1
                outcome = "message_differs" if detail else outcome
            shown = sum(1 for e in examples if e["outcome"] == outcome)
            if outcome != "same_class" and shown < EXAMPLES_PER_KIND:
                examples.append({"outcome": outcome, "detail": detail})
        if tally:
            counts.update(tally)
            per_op.append(
                {
                    "op": op.name,
                    "variant": op.variant_test_name,
                    "torch": path,
                    "counts": dict(tally),
                    "examples": examples,
                }
            )
            if progress:
                progress(f"errors {op.name} {dict(tally)}")
    total = sum(counts.values())
    raised = counts["same_class"] + counts["other_class"]
    summary = {
        "inputs": total,
        "raised": raised,
        "same_class": counts["same_class"],
        "same_message": messages["same"],
        "other_class": counts["other_class"],
        "returned": counts["returned"],
        # of those, inputs torch's test rejects with any Exception and no message (mostly a
        # Python number where torch wants a Tensor: lucid is lenient, not silently wrong)
        "returned_generic": messages["returned_generic"],
        "missing": counts["missing"],
        "raised_pct_of_present": percent(raised, total - counts["missing"]),
        "same_class_pct_of_present": percent(counts["same_class"], total - counts["missing"]),
    }
    return {"summary": summary, "ops": per_op}


def run_error_input(op: Any, caller: Caller, error_input: Any) -> tuple[str | None, str]:
    """(outcome, detail); outcome None when the input is skipped."""
    sample = error_input.sample_input
    expected = error_input.error_type
    everything = (sample.input, sample.args, sample.kwargs)
    if bridge.count_elements(everything) > bridge.MAX_ELEMENTS:
        return None, ""
    try:
        l_in, l_args, l_kwargs = ToLucid(alias_storage=True)(everything)
    except Unconvertible:
        return None, ""
    try:
        with time_limit(SAMPLE_SECONDS):
            op(sample.input, *sample.args, **sample.kwargs)
    except GaugeTimeout:
        return None, ""
    except Exception:
        pass
    else:
        return None, ""  # torch did not raise here (e.g. a CUDA-only error)
    if caller.missing() or (caller.function is None and not caller.method):
        return "missing", f"no {caller.path}"
    try:
        with time_limit(SAMPLE_SECONDS):
            caller(l_in, l_args, l_kwargs)
    except GaugeTimeout as exc:
        return "other_class", str(exc)
    except Exception as exc:
        if exception_kind(exc) == "missing":
            return "missing", short_error(exc)
        want = expected if isinstance(expected, tuple) else (expected,)
        name = "/".join(e.__name__ for e in want)
        if isinstance(exc, want):
            pattern = error_input.error_regex or ""
            # lucid names its own dtypes and layouts (``lucid.float32``, ``lucid.strided``)
            # where torch's message prints ``torch.*``, on purpose (docs/differences.md): the
            # message is torch's once the namespace is torch's
            text = str(exc)
            torch_named = re.sub(r"\blucid\.", "torch.", text)
            try:
                same = any(re.search(pattern, t) is not None for t in (text, torch_named))
            except re.error:
                same = pattern in text or pattern in torch_named
            # torch's message pattern: the house rule is PyTorch's error wording
            return (
                "same_class",
                "" if same else f"torch says /{pattern[:80]}/, lucid {short_error(exc)}",
            )
        return "other_class", f"torch raises {name}, lucid {short_error(exc)}"
    want_name = getattr(expected, "__name__", str(expected))
    return "returned", f"torch raises {want_name} ({error_input.error_regex[:80]}); " + (
        f"lucid returns a result for {describe(sample)}"
    )


# -- integer-like arguments: the samples' Python ints as NumPy integers ----------------------


def numpy_ints(obj: Any) -> Any:
    """``obj`` (a sample's args or kwargs) with every Python int, in tuples, lists and dicts
    too, as a NumPy int64 (bools and everything else as they are)."""
    if type(obj) is int:
        return np.int64(obj)
    if isinstance(obj, tuple):
        return tuple(numpy_ints(o) for o in obj)
    if isinstance(obj, list):
        return [numpy_ints(o) for o in obj]
    if isinstance(obj, dict):
        return {k: numpy_ints(v) for k, v in obj.items()}
    return obj


def takes_mean_reduction(fn: Any) -> bool:
    """Whether ``fn`` (a torch function or module class) has a ``reduction`` parameter whose
    default is ``"mean"`` (a loss)."""
    try:
        param = inspect.signature(fn).parameters.get("reduction")
    except (TypeError, ValueError):
        return False
    return param is not None and param.default == "mean"


def legacy_spellings(obj: Any, mean_default: bool = False) -> Any:
    """``obj`` (a sample's kwargs) with ``reduction="mean"`` (given, or the default of a
    callable whose default it is: ``mean_default``) spelled as torch's deprecated
    ``"elementwise_mean"`` (``_Reduction.get_enum`` still takes it, with a warning)."""
    if not isinstance(obj, dict):
        return obj
    if obj.get("reduction", "mean" if mean_default else None) == "mean":
        return {**obj, "reduction": "elementwise_mean"}
    return obj


# The intargs gauge's rewritings of a sample's arguments: (name, rewrite of args, of kwargs
# (given whether the callable's ``reduction`` defaults to "mean"), whether lucid must refuse
# what torch refuses). Each is a spelling torch takes for the same call: lucid must take it
# and give what it gives for the plain one.
SPELLINGS: tuple[tuple[str, Callable[[Any], Any], Callable[[Any, bool], Any], bool], ...] = (
    ("NumPy integers", numpy_ints, lambda kw, _: numpy_ints(kw), False),
    ("reduction='elementwise_mean'", lambda a: a, legacy_spellings, True),
)


def gauge_intargs(
    deliberate: Deliberate,
    patterns: list[str] | None = None,
    max_samples: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every float32 op_db sample with an int argument (a size, a dim, a count), the ints
    given as NumPy integers (``np.prod(shape)``'s type), where torch takes them: lucid must
    take them too and give what it gives for the plain ints (its result is compared with its
    own, so the gauge measures this one rule, not the op's values); then module_db's samples
    with the constructors' ints so (``gauge_modules.intargs_modules``: compared with torch,
    as the modules gauge compares). The same for the other spellings of ``SPELLINGS``
    (``reduction="elementwise_mean"`` for ``"mean"``), where lucid must also refuse what torch
    refuses (``poisson_nll_loss`` checks the name itself and refuses the old one)."""
    from torch.testing._internal.common_methods_invocations import op_db

    samples = passed = 0
    failing: dict[str, list[str]] = {}
    for op in select(op_db, patterns):
        if excluded_reason(op) or deliberate.reason(torch_path(op)):
            continue
        caller = lucid_caller(op)
        if caller.missing() or (caller.function is None and not caller.method):
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        torch.manual_seed(0)
        try:
            with time_limit(60):
                drawn = list(itertools.islice(op.sample_inputs("cpu", torch.float32), max_samples))
        except (Exception, GaugeTimeout):
            continue
        mean_default = takes_mean_reduction(op.op)
        for sample, (spelling, rewrite_args, rewrite_kwargs, refuse) in itertools.product(
            drawn, SPELLINGS
        ):
            args, kwargs = rewrite_args(sample.args), rewrite_kwargs(sample.kwargs, mean_default)
            if repr((args, kwargs)) == repr((sample.args, sample.kwargs)):
                continue  # nothing to spell otherwise (no int argument)
            try:
                with time_limit(SAMPLE_SECONDS):
                    plain_in, plain_args, plain_kwargs = ToLucid()(
                        (sample.input, sample.args, sample.kwargs)
                    )
                    lucid.manual_seed(0)
                    plain = caller(plain_in, plain_args, plain_kwargs)
            except (Exception, GaugeTimeout):
                continue  # lucid fails with the plain spelling: the opinfo gauge's gap
            try:
                with time_limit(SAMPLE_SECONDS), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.manual_seed(0)
                    op(sample.input, *args, **kwargs)
                torch_takes = True
            except GaugeTimeout:
                continue
            except Exception:
                torch_takes = False
            if not torch_takes and not refuse:
                continue  # torch refuses NumPy integers here
            samples += 1
            try:
                with time_limit(SAMPLE_SECONDS), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    l_in, l_args, l_kwargs = ToLucid()((sample.input, args, kwargs))
                    lucid.manual_seed(0)
                    got = caller(l_in, l_args, l_kwargs)
            except (Exception, GaugeTimeout) as exc:
                if torch_takes:
                    failing.setdefault(op.name, []).append(
                        f"{describe(sample)} ({spelling}): {short_error(exc)}"
                    )
                else:
                    passed += 1  # refused, as torch refuses it
                continue
            if not torch_takes:
                detail = "lucid takes what torch refuses"
                failing.setdefault(op.name, []).append(f"{describe(sample)} ({spelling}): {detail}")
                continue
            verdict = compare_outputs(bridge.leaves(plain), bridge.leaves(got))
            if verdict.kind != "pass":
                failing.setdefault(op.name, []).append(
                    f"{describe(sample)} ({spelling}): {verdict.kind}: {verdict.detail}"
                )
            else:
                passed += 1
        if progress:
            progress(f"{op.name}.{op.variant_test_name} {samples} {passed}")
    from gauge_modules import intargs_modules  # noqa: PLC0415  (it imports this module)

    m_samples, m_passed, m_failing = intargs_modules(deliberate, patterns, max_samples)
    samples, passed = samples + m_samples, passed + m_passed
    failing.update(m_failing)
    return {
        "summary": {"samples": samples, "samples_pass": passed, "ops_failing": len(failing)},
        "ops": [{"op": k, "examples": v[:EXAMPLES_PER_KIND]} for k, v in sorted(failing.items())],
    }
