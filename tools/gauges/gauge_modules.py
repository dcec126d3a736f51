"""Gauge 2: torch's ModuleInfo samples (`common_modules.module_db`) through torch and lucid.

Each sample builds the module in both with the same arguments, copies torch's state_dict into
lucid's, runs forward in training and in eval mode, and compares outputs, the state after
forward (running statistics), and the gradients of the inputs and of every parameter.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import gauge_bridge as bridge
import gauge_opinfo
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
from gauge_opinfo import SAMPLE_SECONDS, select

import lucid
import lucid.nn


def lucid_class(name: str) -> Any:
    """lucid.nn.X for torch's nn.X, or None."""
    target: Any = lucid
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def copy_state(t_module: Any, l_module: Any) -> str:
    """Load torch's state_dict into lucid's module; '' or what went wrong."""
    t_state = t_module.state_dict()
    l_keys = set(l_module.state_dict())
    if set(t_state) != l_keys:
        only_t = sorted(set(t_state) - l_keys)[:5]
        only_l = sorted(l_keys - set(t_state))[:5]
        return f"state_dict keys differ: torch-only {only_t}, lucid-only {only_l}"
    converted = {k: ToLucid().tensor(v.detach()) for k, v in t_state.items()}
    l_module.load_state_dict(converted)
    return ""


def run_module_sample(info: Any, cls: Any, sample: Any, training: bool, seed: int) -> Verdict | str:
    """One ModuleInput through both frameworks."""
    c_args, c_kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
    f_args, f_kwargs = sample.forward_input.args, sample.forward_input.kwargs
    convert = ToLucid()
    try:
        l_c_args, l_c_kwargs = convert((c_args, c_kwargs))
        l_f_args, l_f_kwargs = convert((f_args, f_kwargs))
    except Unconvertible as exc:
        return f"unconvertible argument: {exc}"
    torch.manual_seed(seed)
    try:
        t_module = info.module_cls(*c_args, **c_kwargs)
        t_module.train(training)
        lazy = isinstance(t_module, torch.nn.modules.lazy.LazyModuleMixin)
        if lazy:  # a first forward gives the parameters their shapes
            t_module(*bridge.clone_torch(f_args), **bridge.clone_torch(f_kwargs))
    except Exception:
        return "torch raises"
    try:
        with time_limit(SAMPLE_SECONDS):
            l_module = cls(*l_c_args, **l_c_kwargs)
            l_module.train(training)
            if lazy:
                warm_args, warm_kwargs = ToLucid()((f_args, f_kwargs))
                l_module(*warm_args, **warm_kwargs)
            problem = copy_state(t_module, l_module)
    except GaugeTimeout as exc:
        return Verdict("error", str(exc))
    except Exception as exc:
        return Verdict(exception_kind(exc), "constructing: " + short_error(exc))
    if problem:
        return Verdict("error", problem)
    torch.manual_seed(seed)
    try:
        t_out = t_module(*f_args, **f_kwargs)
    except Exception:
        return "torch raises"
    try:
        with time_limit(SAMPLE_SECONDS):
            l_out = l_module(*l_f_args, **l_f_kwargs)
    except GaugeTimeout as exc:
        return Verdict("error", str(exc))
    except Exception as exc:
        return Verdict(exception_kind(exc), "forward: " + short_error(exc))
    verdict = compare_outputs(bridge.leaves(t_out), bridge.leaves(l_out))
    if verdict.kind != "pass":
        return verdict
    t_state, l_state = t_module.state_dict(), l_module.state_dict()
    for key, value in t_state.items():
        state = compare_outputs(bridge.leaves(value), bridge.leaves(l_state[key]))
        if state.kind != "pass":
            return Verdict(state.kind, f"{key} after forward: {state.detail}")
    t_params = dict(t_module.named_parameters())
    l_params = dict(l_module.named_parameters())
    if set(t_params) != set(l_params):
        return Verdict("gradient", "named_parameters differ")
    pairs = list(convert.grad_pairs) + [(t_params[k], l_params[k]) for k in t_params]
    names = [f"input {i}" for i in range(len(convert.grad_pairs))] + list(t_params)
    with time_limit(SAMPLE_SECONDS):
        grads = bridge.input_grads(t_out, l_out, pairs, seed)
    if grads is None:
        return verdict
    expected, got = grads
    if isinstance(got, str):
        return Verdict("gradient", got)
    return compare_grads(expected, got, names)


def module_verdicts(
    info: Any, cls: Any, training: bool, dtype: torch.dtype, max_samples: int | None
) -> list[tuple[Any, Verdict | str]]:
    """Each sample of one mode and dtype with its verdict (a string: why it is skipped)."""
    torch.manual_seed(0)  # module_inputs_func draws from torch's global generator
    try:
        with time_limit(60), bridge.record_module_args():
            samples = info.module_inputs_func(
                info, device="cpu", dtype=dtype, requires_grad=True, training=training
            )[:max_samples]
    except (Exception, GaugeTimeout):
        return []
    verdicts: list[tuple[Any, Verdict | str]] = []
    for index, sample in enumerate(samples):
        if cls is None:
            verdict: Verdict | str = Verdict("missing", f"no lucid.{info.name}")
        else:
            try:
                verdict = run_module_sample(info, cls, sample, training, index)
            except (Exception, GaugeTimeout) as exc:
                verdict = Verdict("error", f"gauge: {short_error(exc)}")
        verdicts.append((sample, verdict))
    return verdicts


def gauge_modules(
    deliberate: Deliberate,
    patterns: list[str] | None = None,
    max_samples: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every module_db entry, training and eval; the JSON section with its summary."""
    from torch.testing._internal.common_modules import module_db

    records: list[dict[str, Any]] = []
    deliberate_mods: list[dict[str, str]] = []
    totals: Counter[str] = Counter()
    for info in select(module_db, patterns):
        path = "torch." + info.name
        reason = deliberate.reason(path)
        if reason:
            deliberate_mods.append({"module": info.name, "reason": reason})
            continue
        cls = lucid_class(info.name)
        counts: Counter[str] = Counter()
        skipped: Counter[str] = Counter()
        examples: list[dict[str, str]] = []
        start = time.perf_counter()
        for training in (True, False):
            verdicts = module_verdicts(info, cls, training, torch.float32, max_samples)
            if verdicts and all(v == "torch raises" for _, v in verdicts):
                # torch's own samples for this module work only in float64 (FractionalMaxPool's
                # _random_samples are double)
                verdicts = module_verdicts(info, cls, training, torch.float64, max_samples)
            for sample, verdict in verdicts:
                if isinstance(verdict, str):
                    skipped[verdict] += 1
                    continue
                counts[verdict.kind] += 1
                shown = sum(1 for e in examples if e["kind"] == verdict.kind)
                if verdict.kind != "pass" and shown < gauge_opinfo.EXAMPLES_PER_KIND:
                    examples.append(
                        {
                            "kind": verdict.kind,
                            "mode": "train" if training else "eval",
                            "sample": str(sample.desc),
                            "detail": verdict.detail,
                        }
                    )
        total = sum(counts.values())
        status = (
            "no samples"
            if not total
            else "pass"
            if counts["pass"] == total
            else "missing"
            if counts["missing"] == total
            else "partial"
        )
        totals.update(counts)
        records.append(
            {
                "module": info.name,
                "status": status,
                "counts": dict(counts),
                "skipped": dict(skipped),
                "examples": examples,
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
        if progress:
            progress(f"{info.name} {dict(counts)}")
    samples_total = sum(totals.values())
    summary = {
        "modules": len(records),
        "modules_all_pass": sum(1 for r in records if r["status"] == "pass"),
        "modules_missing": sum(1 for r in records if r["status"] == "missing"),
        "samples": samples_total,
        "samples_pass": totals["pass"],
        "samples_pass_pct": percent(totals["pass"], samples_total),
        "by_kind": {k: totals[k] for k in KINDS},
        "deliberate": len(deliberate_mods),
    }
    return {"summary": summary, "modules": records, "deliberate": deliberate_mods}


def intargs_modules(
    deliberate: Deliberate, patterns: list[str] | None, max_samples: int | None
) -> tuple[int, int, dict[str, list[str]]]:
    """The ``intargs`` gauge's module half: module_db's float32 training samples whose
    constructor takes an int, that int given as a NumPy int64 (``nn.Linear(np.prod(shape),
    64)``), where the sample passes with the ints: (samples, passing, failing by module)."""
    import copy  # noqa: PLC0415  (only here)

    from torch.testing._internal.common_modules import module_db

    samples = passed = 0
    failing: dict[str, list[str]] = {}
    for info in select(module_db, patterns):
        cls = lucid_class(info.name)
        if cls is None or deliberate.reason("torch." + info.name):
            continue
        mean_default = gauge_opinfo.takes_mean_reduction(info.module_cls)
        for index, (sample, plain) in enumerate(
            module_verdicts(info, cls, True, torch.float32, max_samples)
        ):
            if isinstance(plain, str) or plain.kind != "pass":
                continue  # lucid fails with the plain arguments: the modules gauge's gap
            given = sample.constructor_input
            for spelling, rewrite_args, rewrite_kwargs, _ in gauge_opinfo.SPELLINGS:
                args = rewrite_args(given.args)
                kwargs = rewrite_kwargs(given.kwargs, mean_default)
                if repr((args, kwargs)) == repr((given.args, given.kwargs)):
                    continue  # nothing to spell otherwise (no int argument)
                changed = copy.copy(sample)
                changed.constructor_input = copy.copy(given)
                changed.constructor_input.args, changed.constructor_input.kwargs = args, kwargs
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        verdict = run_module_sample(info, cls, changed, True, index)
                except (Exception, GaugeTimeout) as exc:
                    verdict = Verdict("error", f"gauge: {short_error(exc)}")
                if isinstance(verdict, str):
                    continue  # torch refuses the spelling
                samples += 1
                if verdict.kind == "pass":
                    passed += 1
                else:
                    failing.setdefault("nn." + info.name.removeprefix("nn."), []).append(
                        f"{sample.desc} ({spelling}): {verdict.kind}: {verdict.detail}"
                    )
    return samples, passed, failing
