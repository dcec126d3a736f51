"""Gauge 4: the public names of torch's documented namespaces, present in lucid at the same path.

A namespace's names are its `__all__` where torch defines one, else its public `dir()` less
imported modules and names defined outside torch (typing helpers). For each name present in
both, the call signature is compared where both can be inspected: every parameter torch names
must exist in lucid (or lucid takes **kwargs).
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import gauge_bridge as bridge  # noqa: F401  (stubs expecttest; imports torch and lucid)
import gauge_torchvision
import torch
from gauge_common import Deliberate, percent

# torch namespace -> lucid namespace
NAMESPACES = {
    "torch": "lucid",
    "torch.Tensor": "lucid.Tensor",
    "torch.nn": "lucid.nn",
    "torch.nn.functional": "lucid.nn.functional",
    "torch.nn.init": "lucid.nn.init",
    "torch.nn.utils": "lucid.nn.utils",
    "torch.optim": "lucid.optim",
    "torch.optim.lr_scheduler": "lucid.optim.lr_scheduler",
    "torch.utils.data": "lucid.utils.data",
    "torch.linalg": "lucid.linalg",
    "torch.special": "lucid.special",
    "torch.distributions": "lucid.distributions",
    "torch.autograd": "lucid.autograd",
    # torch.compile's controls (set_stance, wrap_numpy, the guard filters...): programs that
    # compile call them around it
    "torch.compiler": "lucid.compiler",
    # TorchScript's names: model code checks torch.jit.is_scripting() and carries its
    # decorators; lucid runs them eagerly (lucid.jit's docstring)
    "torch.jit": "lucid.jit",
    # checkpoints by url and hubconf entrypoints; futures; AMP's custom-Function decorators;
    # attention's backend choice (issue 29's gap class: namespaces no gauge read)
    "torch.hub": "lucid.hub",
    "torch.futures": "lucid.futures",
    "torch.amp": "lucid.amp",
    "torch.nn.attention": "lucid.nn.attention",
    # FlexAttention: Hugging Face's masking_utils imports it on every model load
    "torch.nn.attention.flex_attention": "lucid.nn.attention.flex_attention",
    # data-loading scripts set the sharing strategy; model code asks is_in_onnx_export()
    "torch.multiprocessing": "lucid.multiprocessing",
    "torch.profiler": "lucid.profiler",
    "torch.onnx": "lucid.onnx",
    # activation checkpointing's helpers; the function transforms
    "torch.utils.checkpoint": "lucid.utils.checkpoint",
    "torch.func": "lucid.func",
    # the methods and class attributes of the two base classes every program subclasses or
    # calls (`load_state_dict(assign=)` was missing and only a port trial showed it)
    "torch.nn.Module": "lucid.nn.Module",
    "torch.optim.Optimizer": "lucid.optim.Optimizer",
    # device-agnostic programs name these on CPU (seeding, memory reports, no-op contexts)
    "torch.cuda": "lucid.cuda",
}


# Submodules real programs reach as attributes after one plain import (`import torch` then
# `torch.nn.utils.parametrize.register_parametrization(...)`, `import torchvision` then
# `torchvision.utils.make_grid(...)`): `resolve` imports each path, so it cannot see a module
# that is only there once imported by name. The torch paths count where torch itself reaches
# them after `import torch`; torchvision's package __init__ imports these (it is not imported).
ATTRIBUTE_PATHS = (
    # the modules among the namespaces (not torch itself, nor the classes torch.Tensor, ...)
    *(ns for ns in NAMESPACES if ns != "torch" and ns.rsplit(".", 1)[1][0].islower()),
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
    "torch.nn.utils.prune",
    "torch.nn.utils.rnn",
    "torch.nn.utils.stateless",
    "torch.nn.parameter",
    "torch.nn.modules",
    "torch.autograd.functional",
    "torch.autograd.forward_ad",
    "torch.distributions.constraints",
    "torch.optim.swa_utils",
    "torch.utils.checkpoint",
    "torch.utils.hooks",
    "torch.utils._pytree",
    "torch.func",
    "torch.fft",
    "torch.functional",
    "torch.amp",
    "torch.backends.cudnn",
    "torch.testing",
    "torch.random",
    "torch.cuda",
    "torch._dynamo",  # loaded on first access, as torch does (`torch._dynamo.reset()`)
    # private names programs read although torch keeps them private (session 21: EMA helpers
    # and foreach optimizers assert `hasattr(torch, "_foreach_lerp_")`; reversible networks
    # read `torch.cuda._initialized`)
    "torch._foreach_lerp_",
    "torch._foreach_copy_",
    "torch._foreach_add_",
    "torch._foreach_mul_",
    "torch._foreach_sign_",
    "torch._foreach_norm",
    "torch.cuda._initialized",
    # Hugging Face transformers registers its ModelOutput classes as pytree nodes, and its
    # masking_utils (imported by every model) imports TransformGetItemToIndex (session 21)
    "torch.utils._pytree.register_pytree_node",
    "torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex",
    # diffusers' BaseOutput registers with torch's dict helpers; timm's densenet imports
    # `List` from torch.jit.annotations (session 21)
    "torch.utils._pytree._dict_flatten",
    "torch.utils._pytree._dict_unflatten",
    "torch.jit.annotations",
)
TORCHVISION_ATTRIBUTE_PATHS = (
    "torchvision.datasets",
    "torchvision.io",
    "torchvision.models",
    "torchvision.ops",
    "torchvision.transforms",
    "torchvision.transforms.functional",
    "torchvision.utils",
    "torchvision.tv_tensors",
    # timm's data transforms map every member at import (session 21)
    "torchvision.transforms.InterpolationMode.NEAREST_EXACT",
    "torchvision.transforms.InterpolationMode.BOX",
    "torchvision.transforms.InterpolationMode.HAMMING",
    "torchvision.transforms.InterpolationMode.LANCZOS",
)
_WALK = """
import importlib, json, sys
top, name, paths = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
obj = importlib.import_module(top)
missing = []
for path in paths:
    o = obj
    for part in path.split(".")[1:]:
        o = getattr(o, part, None)
        if o is None:
            missing.append(path)
            break
print(json.dumps(missing))
"""


def unreachable_paths(top: str, name: str, paths: list[str]) -> list[str]:
    """Of `paths` (spelt from `name`, e.g. "torch.nn.utils"), those a fresh interpreter does not
    reach by attribute access after `import top as name` alone."""
    run = subprocess.run(
        [sys.executable, "-c", _WALK, top, name, json.dumps(paths)],
        capture_output=True,
        text=True,
        check=True,
    )
    missing: list[str] = json.loads(run.stdout.strip().splitlines()[-1])
    return missing


def attribute_path_gaps() -> dict[str, Any]:
    """The submodule paths a program reaches after `import torch` / `import torchvision` and
    does not reach after the same statement port_check writes (`import lucid as torch`,
    `import lucid.data as torchvision`)."""
    torch_lacks = unreachable_paths("torch", "torch", list(ATTRIBUTE_PATHS))
    torch_has = [p for p in ATTRIBUTE_PATHS if p not in torch_lacks]
    paths = {"torch": torch_has, "torchvision": list(TORCHVISION_ATTRIBUTE_PATHS)}
    tops = {"torch": "lucid", "torchvision": "lucid.data"}
    missing = [m for name, ps in paths.items() for m in unreachable_paths(tops[name], name, ps)]
    return {"checked": sum(len(ps) for ps in paths.values()), "unreachable": missing}


def resolve(path: str) -> Any:
    """The object at a dotted path (importing modules on the way), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


# Classes torch binds from C++ that its documentation covers; the other torch._C classes in
# torch.__all__ are TorchScript's IR and type system (Block, Graph, AnyType...), not the API.
C_CLASSES_DOCUMENTED = {
    "Generator",
    "Size",
    "device",
    "dtype",
    "layout",
    "memory_format",
    "finfo",
    "iinfo",
    "Stream",
    "Event",
    "Tag",
}
# C classes a namespace's own __all__ declares (torch.jit's futures, errors, compilation units)
C_CLASSES_BY_NAMESPACE = {"torch.jit": {"CompilationUnit", "Error", "Future", "ScriptFunction"}}
# torch.__all__ names that torch's documentation leaves out: backend kernels and tracing helpers
# (the `*_copy` view variants are excluded too).
BACKEND_PREFIXES = ("cudnn_", "miopen_", "mkldnn_", "fbgemm_", "quantized_", "native_", "sym_")
# Modules whose helpers leak into torch namespaces' dir(): typing and dispatch machinery.
HELPER_MODULES = (
    "typing",
    "torch._jit_internal",
    "torch.overrides",
    "torch._tensor",
    "torch.types",
    "torch._C._jit",
    "torch.jit",
)


def _documented(namespace: str, name: str, value: Any) -> bool:
    if isinstance(value, types.ModuleType):
        return f"{namespace}.{name}" in NAMESPACES
    module = getattr(value, "__module__", None) or ""
    if namespace == "torch" and name.startswith(BACKEND_PREFIXES) or name.endswith("_copy"):
        return False
    if isinstance(value, type):
        from_c = getattr(torch._C, name, None) is value or module.startswith("torch._C")
        own = C_CLASSES_BY_NAMESPACE.get(namespace, ())
        if from_c and name not in C_CLASSES_DOCUMENTED and name not in own:
            return False
        if name.endswith("Storage") and name != "UntypedStorage":
            return False  # the legacy typed storages
    kind = type(value)
    if not isinstance(value, type) and (kind.__module__ or "").startswith("torch._C"):
        if kind.__name__ not in C_CLASSES_DOCUMENTED:
            return False  # values of TorchScript's enums (torch.AVG, torch.SUM)
    own_module = namespace in HELPER_MODULES and module.startswith(namespace)  # torch.jit's own
    if (module.startswith(HELPER_MODULES) and not own_module) or module == "typing":
        return False
    if not callable(value) and namespace != "torch":
        return False  # module constants (TYPE_CHECKING, mode tables)
    return True


def public_names(namespace: str, obj: Any) -> list[str]:
    """The names torch documents in a namespace (see the module docstring)."""
    if isinstance(obj, type):
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    declared = getattr(obj, "__all__", None)
    candidates = [str(n) for n in declared] if declared is not None else dir(obj)
    names = set()
    for name in candidates:
        if name.startswith("_") or not hasattr(obj, name):
            continue
        value = getattr(obj, name)
        if declared is None and isinstance(value, type):
            home = getattr(value, "__module__", "") or ""
            if not (home == namespace or home.startswith(namespace + ".")):
                continue  # a class imported from elsewhere (torch.Tensor in F, typing's)
        if _documented(namespace, name, value):
            names.add(name)
    return sorted(names)


def _documented_parameters(obj: Any) -> tuple[list[str], bool] | None:
    """The parameters of a C function's docstring's first line: `add(input, other, *, alpha=1,
    out=None) -> Tensor`."""
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    name = getattr(obj, "__name__", "")
    match = re.match(rf"{re.escape(name)}\((.*)\)\s*->", lines[0]) if lines and name else None
    if match is None:
        return None
    names, var_kw = [], False
    for part in match.group(1).split(","):
        part = part.strip().split("=")[0].split(":")[0].strip()
        if part.startswith("**"):
            var_kw = True
        elif part and not part.startswith("*") and part != "self":
            names.append(part)
    return names, var_kw


def _parameters(obj: Any) -> tuple[list[str], bool] | None:
    """Named parameters (without self) and whether **kwargs is taken; None if uninspectable."""
    target = obj.__init__ if isinstance(obj, type) else obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None if isinstance(obj, type) else _documented_parameters(obj)
    names, var_kw = [], False
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
        elif p.kind is not p.VAR_POSITIONAL and p.name not in ("self", "cls"):
            names.append(p.name)
    return names, var_kw


def signature_gap(
    t_obj: Any, l_obj: Any, qualname: str = "", deliberate: Deliberate | None = None
) -> str:
    """'' when compatible or not inspectable, else the torch parameters lucid lacks.

    `out=` is not compared (lucid has none); a parameter listed as deliberate under
    `qualname(param)` is not counted."""
    if isinstance(t_obj, type) and t_obj.__init__ is object.__init__:
        return ""
    t_params, l_params = _parameters(t_obj), _parameters(l_obj)
    if t_params is None or l_params is None:
        return ""
    t_names, _ = t_params
    l_names, l_kw = l_params
    if l_kw:
        return ""
    lacking = [n for n in t_names if n not in l_names and n != "out"]
    if deliberate is not None:
        lacking = [n for n in lacking if not deliberate.reason(f"{qualname}({n})")]
    return f"lucid lacks parameters {lacking}" if lacking else ""


def _only_through_getattr(l_obj: Any, t_obj: Any, name: str) -> bool:
    """Whether lucid's module reaches ``name`` only through a module ``__getattr__`` where
    torch's module (or torchvision's, which is not imported here) holds it in its dict."""
    if not isinstance(l_obj, types.ModuleType) or name in vars(l_obj):
        return False
    return not isinstance(t_obj, types.ModuleType) or name in vars(t_obj)


def gauge_surface(deliberate: Deliberate, torchvision: Path | None = None) -> dict[str, Any]:
    """Every namespace's names: present, missing, deliberate, signature mismatches.

    `torchvision`: a folder holding torchvision's sources (or its wheel) to read its
    namespaces from; without it they are not measured.
    """
    namespaces: dict[str, Any] = {}
    totals = {"present": 0, "total": 0, "signature_mismatch": 0, "deliberate": 0,
              "not_in_module_dict": 0}  # fmt: skip
    listed: dict[str, tuple[str, list[str]]] = {}
    for t_ns, l_ns in NAMESPACES.items():
        listed[t_ns] = (l_ns, public_names(t_ns, resolve(t_ns)))
    if torchvision is not None:
        with tempfile.TemporaryDirectory() as scratch:
            root = gauge_torchvision.source_root(torchvision, Path(scratch))
            for t_ns, l_ns in gauge_torchvision.TORCHVISION_NAMESPACES.items():
                names = sorted(gauge_torchvision.public_names(root, t_ns))
                listed[t_ns] = (l_ns, names)
    for t_ns, (l_ns, names) in listed.items():
        t_obj = resolve(t_ns) if not t_ns.startswith("torchvision") else None
        l_obj = resolve(l_ns)
        missing: list[str] = []
        lazy: list[str] = []
        mismatched: dict[str, str] = {}
        deliberate_names: dict[str, str] = {}
        present = 0
        for name in names:
            has = l_obj is not None and hasattr(l_obj, name)
            reason = deliberate.reason(f"{t_ns}.{name}")
            if reason and not has:  # a listed name lucid has after all counts as present
                deliberate_names[name] = reason
                continue
            if not has:
                missing.append(name)
                continue
            found = getattr(l_obj, name, None)
            if _only_through_getattr(l_obj, t_obj, name):
                # present, but `vars(module)` / `module.__dict__` lacks it: a program that
                # lists a namespace (pytorch/examples' imagenet builds its --arch choices from
                # `torchvision.models.__dict__`) does not find it
                lazy.append(name)
            present += 1
            gap = signature_gap(getattr(t_obj, name, None), found, f"{t_ns}.{name}", deliberate)
            if gap:
                mismatched[name] = gap
        counted = len(names) - len(deliberate_names)
        namespaces[t_ns] = {
            "lucid": l_ns,
            "present": present,
            "total": counted,
            "present_pct": percent(present, counted),
            "missing": missing,
            "not_in_module_dict": lazy,
            "signature_mismatch": mismatched,
            "deliberate": deliberate_names,
        }
        totals["present"] += present
        totals["total"] += counted
        totals["signature_mismatch"] += len(mismatched)
        totals["deliberate"] += len(deliberate_names)
        totals["not_in_module_dict"] += len(lazy)
    attribute_paths = attribute_path_gaps()
    summary = {
        **totals,
        "attribute_paths": attribute_paths["checked"],
        "attribute_paths_unreachable": len(attribute_paths["unreachable"]),
        "namespaces": {
            ns: {"present": v["present"], "total": v["total"], "present_pct": v["present_pct"]}
            for ns, v in namespaces.items()
        },
    }
    return {
        "summary": summary,
        "namespaces": namespaces,
        "unreachable_attribute_paths": attribute_paths["unreachable"],
    }
