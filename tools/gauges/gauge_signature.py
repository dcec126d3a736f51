"""Gauge 5: the call signatures of the names torch and lucid both have.

For every public callable of `torch`, `torch.Tensor` (methods), `torch.nn.functional`,
`torch.nn` (module constructors), `torch.optim` (optimizer constructors), `torch.linalg`,
`torch.special`, `torch.fft`, `torch.autograd` (and its `functional` and `graph`),
`torch.func`, `torch.utils.data`, `torch.amp`, `torch.cuda` and `torch.distributions` that
lucid also has, torch's parameters (from
`inspect.signature`; for its C functions from the aten operator schemas, whose argument names
and keyword-only marks are the Python binding's, or else the docstring's overload lines,
`add(input, other, *, alpha=1, out=None) -> Tensor`) are compared with lucid's
(`inspect.signature`): names, positions, keyword-only kinds and defaults
(`gauge_common.compare_signature`). A name neither side can be inspected for is counted apart.

`out=` apart (`gauge_out`): the comparison above leaves `out` out and cannot read torch's
builtins it has no schema or docstring line for, so for every function of `torch`,
`torch.linalg`, `torch.special`, `torch.fft` and `torch.nn.functional` whose lambda in
`torch.overrides.get_testing_overrides()` (torch's signature, Python-readable) has an `out`
parameter that torch's binding really takes (an `out` aten overload, an `out=` in its
docstring or Python signature), and every factory function torch does not let be overridden
(`linspace`, `full`: `get_ignored_functions()`) that takes it, lucid's function must take
`out` (by name, or `**kwargs`).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import gauge_bridge as bridge  # noqa: F401  (stubs expecttest; imports torch and lucid)
import torch
from gauge_common import (
    KEYWORD_ONLY,
    NO_DEFAULT,
    POSITIONAL,
    POSITIONAL_ONLY,
    SIGNATURE_ISSUES,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Deliberate,
    Param,
    compare_overloads,
    default_text,
    doc_signatures,
    percent,
)
from gauge_surface import public_names, resolve

# torch namespace -> lucid namespace, and what is compared there
SIGNATURE_NAMESPACES = {
    "torch": "lucid",
    "torch.Tensor": "lucid.Tensor",
    "torch.nn.functional": "lucid.nn.functional",
    "torch.nn": "lucid.nn",
    "torch.optim": "lucid.optim",
    "torch.linalg": "lucid.linalg",
    "torch.special": "lucid.special",
    "torch.fft": "lucid.fft",
    # the autograd, data and device namespaces programs call with keywords (gradcheck's
    # fast_mode was missing, 6 December 2026, session 14)
    "torch.autograd": "lucid.autograd",
    "torch.autograd.functional": "lucid.autograd.functional",
    "torch.autograd.graph": "lucid.autograd.graph",
    "torch.func": "lucid.func",
    "torch.utils.data": "lucid.utils.data",
    "torch.amp": "lucid.amp",
    "torch.cuda": "lucid.cuda",
    "torch.distributions": "lucid.distributions",
    # reversible networks fork the RNG by keyword (`fork_rng(devices=..., enabled=True)` raised
    # TypeError: session 21's performer trial)
    "torch.random": "lucid.random",
}
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
    inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
    inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD,
}


# torch namespace -> the prefix of its aten operators (torch.linalg.norm is aten::linalg_norm)
ATEN_PREFIXES = {
    "torch": "",
    "torch.Tensor": "",
    "torch.linalg": "linalg_",
    "torch.special": "special_",
    "torch.fft": "fft_",
}


def schema_params(aten_name: str, method: bool) -> list[list[Param]]:
    """The overloads of an aten operator (`torch._C._jit_get_schemas_for_operator`), less its
    `out=` variants and the overloads only TorchScript has (registered outside the dispatcher,
    so no Python binding takes them): `self` is the method's receiver, `input` of the function;
    kwarg-only arguments are keyword-only."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + aten_name)
    except RuntimeError:
        return []
    found = []
    for schema in schemas:
        args = list(schema.arguments)
        if any(a.name == "out" or a.is_out for a in args):
            continue
        if not any("Tensor" in str(a.type) for a in args):
            continue  # TorchScript's overloads on Python numbers (aten::acos.int(int a))
        overload = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
        if not torch._C._dispatch_dump(overload):
            continue  # TorchScript-only (aten::eq.Tensor_list(Tensor[] a, ...)): not in Python
        params = []
        for a in args:
            if a.name == "self" and method:
                continue
            default = default_text(a.default_value) if a.has_default_value() else NO_DEFAULT
            kind = KEYWORD_ONLY if a.kwarg_only else POSITIONAL
            params.append(Param("input" if a.name == "self" else a.name, kind, default))
        found.append(params)
    return found


def params_of(
    obj: Any, name: str, method: bool = False, aten_prefix: str | None = None
) -> list[list[Param]] | None:
    """The overloads of `obj`'s parameters: from `inspect.signature`; for a C function the
    aten schemas of `aten_prefix + name` (their argument names and kinds are the binding's),
    else each docstring line `name(...) -> ...`. A class gives its constructor's, a method (an
    unbound function of the class) drops its first parameter; None when nothing works."""
    target = obj.__init__ if isinstance(obj, type) else obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        found = schema_params(aten_prefix + name, method) if aten_prefix is not None else []
        found = found or doc_signatures(getattr(obj, "__doc__", None) or "", name)
        return found or None
    params = [
        Param(
            p.name,
            _KINDS[p.kind],
            NO_DEFAULT if p.default is inspect.Parameter.empty else default_text(p.default),
        )
        for p in signature.parameters.values()
    ]
    if isinstance(obj, type) and params and params[0].name in ("self", "cls"):
        params = params[1:]
    elif method and params and params[0].kind in (POSITIONAL_ONLY, POSITIONAL):
        params = params[1:]  # self, whatever the op function that became the method calls it
    if params == [Param("args", VAR_POSITIONAL), Param("kwargs", VAR_KEYWORD)]:
        return None  # a wrapper that hides its signature: not comparable
    return [params]


def _compared_names(t_ns: str, t_obj: Any) -> list[str]:
    names = public_names(t_ns, t_obj)
    if t_ns == "torch.nn":
        return [n for n in names if isinstance(getattr(t_obj, n, None), type)
                and issubclass(getattr(t_obj, n), torch.nn.Module)]  # fmt: skip
    if t_ns == "torch.optim":
        return [n for n in names if isinstance(getattr(t_obj, n, None), type)
                and issubclass(getattr(t_obj, n), torch.optim.Optimizer)]  # fmt: skip
    return [n for n in names if callable(getattr(t_obj, n, None))]


# the namespaces whose functions take torch's out= (the Tensor methods take none)
OUT_NAMESPACES = ("torch", "torch.linalg", "torch.special", "torch.fft", "torch.nn.functional")


def _torch_takes_out(fn: Any, name: str, aten_prefix: str, factory: bool) -> bool:
    """Whether torch's binding of `fn` takes `out=` (its override lambda may say so wrongly:
    `torch.squeeze`'s has `out=None`, the binding none). A factory function has no lambda, and
    its aten `out` overload may have no binding (`hann_window.out`): its docstring decides."""
    try:
        return "out" in inspect.signature(fn).parameters  # a Python function: its own word
    except (TypeError, ValueError):
        pass
    if factory:  # `\bout=`: not `layout=`
        return re.search(r"\bout=", getattr(fn, "__doc__", None) or "") is not None
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + aten_prefix + name)
    except RuntimeError:
        schemas = []
    if any(a.name == "out" or a.is_out for s in schemas for a in s.arguments):
        return True
    return re.search(r"\bout=", getattr(fn, "__doc__", None) or "") is not None


def _takes_out(fn: Any) -> bool | None:
    """Whether lucid's `fn` takes `out` (by name or `**kwargs`); None: not inspectable."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return any(p.name == "out" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def gauge_out() -> dict[str, Any]:
    """Per namespace: the functions that take torch's `out=` which lucid has, and which of them
    take it in lucid."""
    overrides = torch.overrides.get_testing_overrides()
    # the factory functions (linspace, full, ...) are not overridable: no lambda, torch's own
    # schema or docstring says whether they take out=
    factories = torch.overrides.get_ignored_functions()
    namespaces: dict[str, Any] = {}
    for t_ns in OUT_NAMESPACES:
        t_obj, l_obj = resolve(t_ns), resolve(SIGNATURE_NAMESPACES[t_ns])
        if t_obj is None or l_obj is None:
            continue
        lacking, compared = [], 0
        for name in _compared_names(t_ns, t_obj):
            fn = getattr(t_obj, name)
            lam = overrides.get(fn)
            if not hasattr(l_obj, name) or (lam is None and fn not in factories):
                continue
            try:
                if lam is not None and "out" not in inspect.signature(lam).parameters:
                    continue
            except (TypeError, ValueError):
                continue
            if not _torch_takes_out(fn, name, ATEN_PREFIXES.get(t_ns, ""), lam is None):
                continue
            compared += 1
            if not _takes_out(getattr(l_obj, name)):
                lacking.append(name)
        namespaces[t_ns] = {"compared": compared, "take_out": compared - len(lacking),
                            "lacking": lacking}  # fmt: skip
    compared = sum(v["compared"] for v in namespaces.values())
    take = sum(v["take_out"] for v in namespaces.values())
    return {"compared": compared, "take_out": take, "namespaces": namespaces}


def gauge_signature(deliberate: Deliberate) -> dict[str, Any]:
    """Per namespace: names compared, names whose signatures match, the problems of the rest."""
    namespaces: dict[str, Any] = {}
    totals = {"compared": 0, "match": 0, "uninspectable": 0, "deliberate": 0}
    by_issue = dict.fromkeys(SIGNATURE_ISSUES, 0)
    for t_ns, l_ns in SIGNATURE_NAMESPACES.items():
        t_obj, l_obj = resolve(t_ns), resolve(l_ns)
        if t_obj is None or l_obj is None:
            continue
        mismatched: dict[str, list[str]] = {}
        compared = match = uninspectable = deliberate_count = 0
        for name in _compared_names(t_ns, t_obj):
            if not hasattr(l_obj, name):
                continue
            method = t_ns == "torch.Tensor"
            t_params = params_of(getattr(t_obj, name), name, method, ATEN_PREFIXES.get(t_ns))
            l_params = params_of(getattr(l_obj, name), name, method)
            if t_params is None or l_params is None:
                uninspectable += 1
                continue
            compared += 1
            issues = compare_overloads(t_params, l_params[0])
            qual = f"{t_ns}.{name}"
            kept = [
                i for i in issues if not deliberate.reason(f"{qual}({i.split(': ')[1].split()[0]})")
            ]
            if len(kept) < len(issues):
                deliberate_count += 1
            if kept:
                mismatched[name] = kept
                for issue in kept:
                    by_issue[issue.split(":")[0]] += 1
            else:
                match += 1
        namespaces[t_ns] = {
            "lucid": l_ns,
            "compared": compared,
            "match": match,
            "match_pct": percent(match, compared),
            "uninspectable": uninspectable,
            "mismatch": mismatched,
        }
        totals["compared"] += compared
        totals["match"] += match
        totals["uninspectable"] += uninspectable
        totals["deliberate"] += deliberate_count
    out = gauge_out()
    summary = {
        **totals,
        "out_compared": out["compared"],
        "out_take": out["take_out"],
        "match_pct": percent(totals["match"], totals["compared"]),
        "by_issue": by_issue,
        "namespaces": {
            ns: {"compared": v["compared"], "match": v["match"], "match_pct": v["match_pct"]}
            for ns, v in namespaces.items()
        },
    }
    return {"summary": summary, "namespaces": namespaces, "out": out["namespaces"]}
