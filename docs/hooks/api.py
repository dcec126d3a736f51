"""The API reference as data: one table of pages, the public names each documents, its Markdown.

``PAGES`` is the one place to edit: a new page is one ``Page`` row (its modules, the
distribution that ships them, the PyTorch name they mirror). A page documents every public name
of each of its modules (``__all__``, or where a module has none, the functions and classes it
defines or re-exports from its own subpackages) and of every submodule reachable from those
names that has no page of its own. ``lucid``'s own names are split over several pages by
``Page.names``; the ones no page claims go on the ``lucid`` page.

MkDocs writes the pages through ``docs/hooks/mkdocs_hooks.py``; the test
``tests-integration/test_integration_docs_reference.py`` checks the same lists without MkDocs.
This module imports nothing but the standard library and the packages it documents.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Page:
    """One reference page: ``docs/reference/<slug>.md`` (written at build time)."""

    slug: str
    title: str
    distribution: str
    torch: str  # the PyTorch name the page mirrors
    summary: str
    modules: tuple[str, ...] = ()  # every public name of each, and of their public submodules
    names: tuple[str, ...] = ()  # these names of the top-level ``lucid`` namespace


CREATION = (
    "tensor", "as_tensor", "from_numpy", "zeros", "zeros_like", "ones", "ones_like", "empty",
    "empty_like", "full", "full_like", "eye", "arange", "linspace", "logspace", "rand",
    "rand_like", "randn", "randn_like", "randint", "randint_like", "empty_strided",
    "empty_permuted",
)  # fmt: skip
DTYPES = (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "complex64", "complex128", "half", "float", "double", "long", "int", "short",
    "cfloat", "cdouble",
)  # fmt: skip
LEGACY_TENSORS = (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "ComplexFloatTensor",
    "ComplexDoubleTensor",
)  # fmt: skip

PAGES: tuple[Page, ...] = (
    Page("lucid", "lucid", "lucid-core", "torch",
         "The top-level namespace: the names that no topic page below claims.", names=()),
    Page("tensor", "Tensor", "lucid-core", "torch.Tensor",
         "The n-dimensional array with autograd. Its methods are the ops of `lucid.ops` "
         "with the tensor as first argument.", names=("Tensor", *LEGACY_TENSORS)),
    Page("creation", "Creation", "lucid-core", "torch (creation ops)",
         "Functions that make new tensors.", names=CREATION),
    Page("dtypes", "Data types", "lucid-core", "torch.dtype",
         "One `lucid.dtype` object per element type, and type promotion.",
         modules=("lucid.dtypes",), names=DTYPES),
    Page("ops", "Tensor operations", "lucid-core", "torch (pointwise, reduction, ... ops)",
         "Every op, grouped by the module of `lucid.ops` that defines it; each is both "
         "`lucid.<op>` and, where it takes a tensor first, `Tensor.<op>`.",
         modules=("lucid.ops",)),
    Page("autograd", "Autograd", "lucid-core", "torch.autograd",
         "Gradient modes, `backward`/`grad`, custom `Function`s and their gradcheck.",
         modules=("lucid.autograd", "lucid.autograd.functional", "lucid.autograd.graph",
                  "lucid.autograd.anomaly_mode", "lucid.autograd.forward_ad")),
    Page("func", "lucid.func", "lucid-core", "torch.func",
         "Composable function transforms: `grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, "
         "`hessian`, `vmap`, `functional_call`, `stack_module_state`.",
         modules=("lucid.func",), names=("vmap",)),
    Page("linalg", "Linear algebra", "lucid-core", "torch.linalg", "", modules=("lucid.linalg",)),
    Page("fft", "lucid.fft", "lucid-core", "torch.fft",
         "Discrete Fourier transforms, with the window functions and the short-time transform "
         "(`lucid.stft`, `lucid.istft`) of the top-level namespace. Complex tensors: see "
         "`lucid.ops.complex` on the ops page and the differences page.",
         modules=("lucid.fft",),
         names=("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                "kaiser_window", "stft", "istft")),
    Page("random", "Random sampling", "lucid-core", "torch.random",
         "Seeding, generators, and sampling functions.", modules=("lucid.random",)),
    Page("serialization", "Serialization", "lucid-core", "torch.save / torch.load",
         "Checkpoints: safetensors, and torch.save's formats read with torch's weights-only "
         "allowlist.",
         modules=("lucid.serialization",)),
    Page("viz", "Graph drawing", "lucid-core", "torchviz", "", modules=("lucid.viz",)),
    Page("special", "Special functions", "lucid-core", "torch.special", "",
         modules=("lucid.special",)),
    Page("masked", "lucid.masked", "lucid-core", "torch.masked",
         "Reductions and normalizations that skip the masked-out elements of a dense tensor "
         "(`mask=`, broadcast to the input).", modules=("lucid.masked",)),
    Page("signal", "lucid.signal", "lucid-core", "torch.signal",
         "Window functions (`lucid.signal.windows`), with SciPy's `sym=` convention.",
         modules=("lucid.signal", "lucid.signal.windows")),
    Page("nested", "lucid.nested", "lucid-core", "torch.nested",
         "torch.nested's functions with its signatures, each raising: lucid has no nested "
         "(ragged) tensors; pad the sequences and pass a mask instead (see the differences "
         "page).", modules=("lucid.nested",)),
    Page("distributions", "Distributions", "lucid-core", "torch.distributions", "",
         modules=("lucid.distributions",)),
    Page("amp", "Mixed precision", "lucid-core", "torch.amp", "", modules=("lucid.amp",)),
    Page("devices", "Devices and backends", "lucid-core", "torch.device / torch.backends",
         "Devices, the backend protocol, fused-kernel contracts, accelerator queries.",
         # lucid.kernels re-exports these three modules' names: documented where they live
         modules=("lucid.backends", "lucid.kernels.contracts", "lucid.kernels.geometry",
                  "lucid.kernels.reference", "lucid.accelerator", "lucid.cuda", "lucid.xpu",
                  "lucid.cpu"),
         names=("device",)),
    Page("utils", "Utilities", "lucid-core", "torch.utils",
         "Hook handles, file helpers and activation checkpointing (`lucid.utils.checkpoint`).",
         modules=("lucid.utils", "lucid.utils.checkpoint")),
    Page("testing", "lucid.testing", "lucid-core", "torch.testing",
         "`assert_close` with torch's tolerances and messages, and `make_tensor`.",
         modules=("lucid.testing",)),
    Page("nn-einops", "lucid.nn.einops", "lucid-nn", "einops.layers.torch",
         "einops's `Rearrange`, `Reduce` and `EinMix` layers as lucid modules (needs einops).",
         modules=("lucid.nn.einops",)),
    Page("multiprocessing", "lucid.multiprocessing", "lucid-core", "torch.multiprocessing",
         "Python's multiprocessing with `spawn`; shared-memory tensors for Hogwild.",
         modules=("lucid.multiprocessing",)),
    Page("compiler", "lucid.compiler", "lucid-core", "torch.compiler",
         "`lucid.compile`'s controls (`disable`, `reset`, `set_stance`, `is_compiling`, the rest "
         "of torch.compiler's names), `explain` and the capture's hooks; see the guide "
         "\"Compiling a step with lucid.compile\".",
         modules=("lucid.compiler",)),
    Page("jit", "lucid.jit", "lucid-core", "torch.jit",
         "TorchScript's names, run eagerly: the annotations and decorators model code carries, "
         "`script`/`trace` giving the callable back; `save`/`load` say what to use instead.",
         modules=("lucid.jit",)),
    Page("fx", "lucid.fx", "lucid-core", "torch.fx",
         "torch.fx's names without its tracer: `wrap` and `has_side_effect` give their argument "
         "back (the leaf registrations libraries make at import), `map_arg`, `Proxy`/`Node` for "
         "`isinstance`; tracing raises, naming `lucid.compile`.",
         modules=("lucid.fx",)),
    Page("overrides", "lucid.overrides", "lucid-core", "torch.overrides",
         "torch.overrides' names for a framework without `__torch_function__` dispatch: "
         "`has_torch_function` is False, the function lists are empty, `wrap_torch_function` "
         "gives the function back; a `TorchFunctionMode` subclasses but raises on entry.",
         modules=("lucid.overrides",)),
    Page("version", "lucid.version", "lucid-core", "torch.version",
         "torch.version's names: lucid's own `__version__`; `cuda`, `hip`, `rocm`, `xpu` None, "
         "as PyTorch's CPU-only build answers.",
         modules=("lucid.version",)),
    Page("hub", "lucid.hub", "lucid-core", "torch.hub",
         "Checkpoints by url from torch hub's cache (no implicit download), "
         "`download_url_to_file`, entrypoints of a local `hubconf.py`.",
         modules=("lucid.hub",)),
    Page("futures", "lucid.futures", "lucid-core", "torch.futures",
         "`Future` (done when made: lucid runs work at once), `collect_all`, `wait_all`.",
         modules=("lucid.futures",)),
    Page("profiler", "lucid.profiler", "lucid-core", "torch.profiler",
         "Op-by-op timings of forward and backward, summary tables, Chrome traces.",
         modules=("lucid.profiler", "lucid.autograd.profiler")),
    Page("sparse", "lucid.sparse", "lucid-core", "torch.sparse",
         "COO tensors as torch programs build them, stored dense: `sparse_coo_tensor`, `mm`.",
         modules=("lucid.sparse",)),
    Page("benchmark", "lucid.utils.benchmark", "lucid-core", "torch.utils.benchmark",
         "`Timer`, `Measurement`, `Compare`: timing statements as torch's benchmark utilities.",
         modules=("lucid.utils.benchmark",)),
    Page("tensorboard", "lucid.utils.tensorboard", "lucid-core",
         "torch.utils.tensorboard",
         "`SummaryWriter`: TensorBoard event files (needs the `tensorboard` package).",
         modules=("lucid.utils.tensorboard", "lucid.utils.tensorboard.summary")),
    Page("nn", "lucid.nn", "lucid-nn", "torch.nn",
         "Module, Parameter, Buffer, containers and layers.",
         modules=("lucid.nn", "lucid.nn.parallel")),
    Page("nn-functional", "lucid.nn.functional", "lucid-nn", "torch.nn.functional", "",
         modules=("lucid.nn.functional",)),
    Page("nn-init", "lucid.nn.init", "lucid-nn", "torch.nn.init", "", modules=("lucid.nn.init",)),
    Page("nn-utils", "lucid.nn.utils", "lucid-nn", "torch.nn.utils",
         "Gradient clipping, parameter vectors, packed sequences; parametrizations (weight "
         "and spectral norm, orthogonal) and their legacy hooks, pruning, conv/linear + "
         "batch-norm fusion, `stateless.functional_call`.",
         modules=("lucid.nn.utils",)),
    Page("optim", "lucid.optim", "lucid-optim", "torch.optim", "", modules=("lucid.optim",)),
    Page("lr-scheduler", "lucid.optim.lr_scheduler", "lucid-optim", "torch.optim.lr_scheduler",
         "", modules=("lucid.optim.lr_scheduler",)),
    Page("swa-utils", "lucid.optim.swa_utils", "lucid-optim", "torch.optim.swa_utils",
         "Weight averaging (SWA, EMA), its lr schedule and batch-norm refresh; needs lucid-nn "
         "(the `nn` extra).", modules=("lucid.optim.swa_utils",)),
    Page("data", "lucid.data", "lucid-data", "torch.utils.data / torchvision.datasets",
         "Datasets, samplers, `DataLoader`; image datasets, transforms (v1 and v2) and "
         "`tv_tensors`. `lucid.utils.data` is the same module under PyTorch's name.",
         modules=("lucid.data", "lucid.data.datasets", "lucid.data.transforms",
                  "lucid.data.tv_tensors", "lucid.data.utils", "lucid.data.io")),
    Page("data-ops", "lucid.data.ops", "lucid-data", "torchvision.ops",
         "Detection operators: box IoUs and conversions, NMS, RoI Align/Pool and their "
         "position-sensitive forms, deformable convolution, DropBlock, focal and IoU losses.",
         modules=("lucid.data.ops",)),
    Page("models", "lucid.models", "lucid-models", "torchvision.models", "",
         modules=("lucid.models",)),
    Page("models-ops", "lucid.models.ops", "lucid-models", "torchvision.ops (layers)",
         "`FeaturePyramidNetwork`, `MultiScaleRoIAlign`, `RoIAlign`, `RoIPool`, `PSRoIAlign`, "
         "`PSRoIPool`, `DeformConv2d`, `DropBlock2d/3d`, `FrozenBatchNorm2d` and the zoo's "
         "blocks; also reached as `lucid.data.ops.<name>`.", modules=("lucid.models.ops",)),
    Page("mlx", "MLX backend", "lucid-backend-mlx", "torch.backends.mps",
         "The backend plugin for device `\"mlx\"` (alias `\"gpu\"`).",
         modules=("lucid.backends.mlx",)),
    Page("distributed", "lucid.distributed", "lucid-distributed", "torch.distributed",
         "Process groups and collectives on MPI (mpi4py) and mx.distributed, "
         "`DistributedDataParallel`, `SyncBatchNorm`; the `lucid-run` launcher.",
         modules=("lucid.distributed",)),
    Page("onnx", "lucid.onnx", "lucid-onnx", "torch.onnx",
         "Export a model to ONNX and load an ONNX file back as a module.",
         modules=("lucid.onnx",)),
)  # fmt: skip


def installed(page: Page) -> bool:
    """Whether the page's modules import here (a distribution may be left uninstalled)."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in page.modules)
    except ImportError:  # a parent is missing, or lucid's finder names the distribution
        return False


def pages() -> list[Page]:
    """The pages whose distribution is installed: the ones the site has."""
    return [p for p in PAGES if installed(p)]


# Names reached under a second public path: documented once, under the first.
ALIASED_MODULES = {"lucid.utils.data": "lucid.data"}


@dataclass(frozen=True)
class Section:
    """One heading of a page: a module (or ``lucid`` names) and the entries under it."""

    heading: str
    entries: tuple[str, ...]  # dotted paths of functions, classes and other callables
    constants: tuple[str, ...]  # dotted paths of plain values (dtypes, numbers)


def resolve(path: str) -> Any:
    """The object at a dotted path such as ``lucid.nn.Linear``."""
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return importlib.import_module(path)


def _own(value: Any, module: types.ModuleType) -> bool:
    """Whether ``value`` is a function or class of ``module``'s own (sub)package."""
    if isinstance(value, types.ModuleType) or is_constant(value):
        return False
    owner = getattr(value, "__module__", None) or ""
    return owner == module.__name__ or owner.startswith(module.__name__ + ".")


def public_names(module: types.ModuleType) -> list[str]:
    """``__all__``, or the functions and classes the module defines or re-exports."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n, v in vars(module).items() if not n.startswith("_") and _own(v, module)]


def is_constant(value: Any) -> bool:
    """A value that is no function, class or module (a dtype, a number, a type alias): listed
    in a table, without a docstring of its own."""
    if isinstance(value, (types.GenericAlias, types.UnionType)):
        return True
    return not (isinstance(value, (type, types.ModuleType)) or inspect.isroutine(value))


def _submodule(value: Any, parent: str) -> str | None:
    if isinstance(value, types.ModuleType) and value.__name__.startswith(parent + "."):
        return value.__name__
    return None


def page_modules(page: Page) -> list[str]:
    """The page's modules and every public submodule they reach without a page of its own."""
    elsewhere = {m for p in PAGES if p is not page for m in p.modules}
    found: list[str] = []
    todo = list(page.modules)
    while todo:
        name = todo.pop(0)
        if name in found:
            continue
        found.append(name)
        module = importlib.import_module(name)
        for n in public_names(module):
            sub = _submodule(getattr(module, n), name)
            if sub and sub not in elsewhere:
                todo.append(sub)
    return found


def _section(heading: str, prefix: str, names: list[str], owner: Any) -> Section:
    entries, constants = [], []
    for n in names:
        value = getattr(owner, n)
        if isinstance(value, types.ModuleType):
            continue
        (constants if is_constant(value) else entries).append(f"{prefix}.{n}")
    return Section(heading, tuple(entries), tuple(constants))


def _module_sections(name: str) -> Iterator[Section]:
    module = importlib.import_module(name)
    if name != "lucid.ops":
        yield _section(name, name, public_names(module), module)
        return
    import lucid

    for op_module, rows in _ops_by_module(module):
        yield _section(op_module, "lucid", rows, lucid)


def _ops_by_module(ops: Any) -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = {}
    for op_module, row in ops.rows():
        groups.setdefault(op_module.__name__, []).append(row.name)
    return list(groups.items())


def top_level_names() -> list[str]:
    """``lucid``'s public names: its ``__all__`` and the ops it re-exports."""
    import lucid
    import lucid.ops

    return list(dict.fromkeys([*lucid.__all__, *lucid.ops.__all__]))


def _claimed_objects() -> set[int]:
    """ids of every object documented on a module section of some page."""
    ids = set()
    for page in pages():
        for module in page_modules(page):
            for section in _module_sections(module):
                ids.update(id(resolve(p)) for p in section.entries)
    return ids


def _unclaimed_top_level() -> list[str]:
    import lucid

    claimed = _claimed_objects()
    named = {n for p in pages() for n in p.names}
    return [
        n
        for n in top_level_names()
        if n not in named
        and not isinstance(getattr(lucid, n), types.ModuleType)
        and id(getattr(lucid, n)) not in claimed
    ]


def sections(page: Page) -> list[Section]:
    """Every section of a page, in order: its ``lucid`` names first, then its modules."""
    import lucid

    out = []
    names = list(page.names) if page.slug != "lucid" else _unclaimed_top_level()
    if names:
        out.append(_section("lucid", "lucid", names, lucid))
    for module in page_modules(page):
        out.extend(_module_sections(module))
    return out


def page_distribution(module: str) -> str:
    """The distribution folder under ``packages/`` whose sources hold ``module``."""
    path = Path(inspect.getfile(importlib.import_module(module))).resolve()
    rel = path.relative_to(REPO / "packages")
    return rel.parts[0]


def _has_doc(value: Any) -> bool:
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return bool((getattr(value, "__doc__", None) or "").strip())


def _public_members(cls: type) -> list[str]:
    """The public methods and properties a class defines itself (what its entry lists)."""
    kinds = (property, staticmethod, classmethod, types.FunctionType)
    return [n for n, v in vars(cls).items() if not n.startswith("_") and isinstance(v, kinds)]


def _member_documented(cls: type, name: str) -> bool:
    """Whether ``cls.name`` has a docstring, or a base class's ``name`` has one (the site then
    shows the base's, through griffe-inherited-docstrings)."""
    return any(_has_doc(vars(base)[name]) for base in cls.__mro__ if name in vars(base))


def _undocumented(path: str) -> list[str]:
    value = resolve(path)
    missing = [] if _has_doc(value) else [path]
    if isinstance(value, type):
        missing += [
            f"{path}.{n}" for n in _public_members(value) if not _member_documented(value, n)
        ]
    return missing


def missing_docstrings() -> list[str]:
    """Every documented function, class, method or property without a docstring."""
    return sorted({m for page in pages() for s in sections(page) for p in s.entries
                   for m in _undocumented(p)})  # fmt: skip


def _intro(page: Page) -> list[str]:
    lines = [
        f"# {page.title}",
        "",
        f"**Distribution:** `{page.distribution}` (`pip install {page.distribution}`)  ",
        f"**Mirrors:** `{page.torch}`",
        "",
    ]
    return lines + ([page.summary, ""] if page.summary else [])


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value).replace("`", "'").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _constants_table(paths: tuple[str, ...]) -> list[str]:
    rows = ["| name | value |", "| --- | --- |"]
    for path in paths:
        rows.append(f'| <span id="{path}"></span>`{path}` | `{_short_repr(resolve(path))}` |')
    return [*rows, ""]


def page_markdown(page: Page) -> str:
    """The Markdown source of a page: ``:::`` entries for mkdocstrings, tables of constants."""
    lines = _intro(page)
    for section in sections(page):
        if not (section.entries or section.constants):
            continue
        lines += [f"## `{section.heading}`", ""]
        if section.constants:
            lines += _constants_table(section.constants)
        for path in section.entries:
            lines += [f"::: {path}", *_entry_options(path), ""]
    return "\n".join(lines)


def _entry_options(path: str) -> list[str]:
    """mkdocstrings options for one entry: a Protocol's ``__init__`` is typing's placeholder,
    which griffe cannot resolve to merge into the class."""
    if getattr(resolve(path), "_is_protocol", False):
        return ["    options:", "      merge_init_into_class: false"]
    return []


def index_markdown() -> str:
    """The reference's front page: every page with its distribution and PyTorch name."""
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings of every package. Each page names the distribution "
        "that ships it and the PyTorch name it mirrors; see also "
        "[differences from PyTorch](../differences.md).",
        "",
        "| page | distribution | mirrors |",
        "| --- | --- | --- |",
    ]
    for page in pages():
        lines.append(f"| [{page.title}]({page.slug}.md) | `{page.distribution}` | `{page.torch}` |")
    return "\n".join([*lines, ""])


def expected_names() -> set[str]:
    """Every public path reachable from the packages' ``__all__`` (not from the pages' lists)."""
    roots = ["lucid", *(m for p in pages() for m in p.modules)]
    found: set[str] = set()
    seen: set[str] = set()
    while roots:
        name = roots.pop()
        name = ALIASED_MODULES.get(name, name)
        if name in seen:
            continue
        seen.add(name)
        module = importlib.import_module(name)
        names = top_level_names() if name == "lucid" else public_names(module)
        for n in names:
            value = getattr(module, n)
            sub = _submodule(value, name)
            if sub:
                roots.append(sub)
            elif not isinstance(value, types.ModuleType):
                found.add(f"{name}.{n}")
    return found


# Lucid's docstrings write examples as bare doctest lines, as PyTorch's do; Markdown would read
# ``>>>`` as a quote. docs/hooks/griffe_doctest.py fences them before mkdocstrings renders.
def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest lines (prompt, continuation, output) fenced."""
    out: list[str] = []
    indent: str | None = None  # the open block's indentation, or None outside one
    in_fence = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if indent is None and stripped.startswith("```"):
            in_fence = not in_fence
        if indent is None and not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
        elif indent is not None and not stripped:
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)
