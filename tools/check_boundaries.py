"""Fail when a package imports a sibling it does not declare, or lucid-core imports upward.

Reads every package's `src/` with `ast` (nothing is imported or installed) and checks:

1. each import of a `lucid.<sub>` module shipped by another distribution is declared in the
   importer's pyproject (`dependencies` or an extra), and no module imports a `lucid.<sub>` that
   no package ships;
2. no module imports a private module or name (`lucid._x`, `lucid.backends._blas`: any dotted
   part that starts with `_`) shipped by another distribution; within one distribution private
   imports are fine, and so are the modules named after torch's that programs import by their
   `_` names (`TORCH_NAMED_PUBLIC`: `lucid.utils._pytree`);
3. the namespace `__init__.py` files of lucid-core (`lucid/`, `lucid/backends/`, `lucid/utils/`)
   import only what lucid-core ships, and only lucid-core ships them;
4. sibling dependencies are version ranges, never paths or URLs;
5. inside lucid-core, every module sits in a row of `CORE_LAYERS` and imports only modules of
   its own layer or below: module-level and function-level imports, relative ones and
   `importlib.import_module("...")` / `__import__("...")` with a literal all count; imports
   under `if TYPE_CHECKING:` never run and are exempt;
6. no distribution has an import cycle (lucid-core and the cycle-free ones fail, the others'
   cycles print as `note:` lines, see `CYCLES_ALLOWED`).

How an import becomes an edge (checks 5 and 6): it points at the most specific module that
exists (`from lucid.ops import add` -> `lucid.ops`, `from lucid.ops import unary` ->
`lucid.ops.unary`), and also at each package above that module (Python runs their
`__init__`s first), except the root `lucid` and the importer's own packages, which have always
run before the importer.

A cycle is reported by the edges that close it: a small set of edges (upward imports first,
then a heuristic order inside a layer) whose removal leaves no cycle, each printed with the
shortest way back from its target to its source, every edge with its `file:line`.

Usage: python tools/check_boundaries.py [--root REPO] [--cycles]
       (exit 1 and one line per violation; --cycles prints the cycle report of every
       distribution alone, for readers, and exits 1 when a cycle fails the check)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from _workspace import Package, load_packages, owner_of, requirement_name

CORE = "lucid-core"
NAMESPACE_INITS = ("lucid/__init__.py", "lucid/backends/__init__.py", "lucid/utils/__init__.py")


@dataclass(frozen=True)
class Layer:
    number: int
    name: str

    def __str__(self) -> str:
        return f"layer {self.number} {self.name}"


FOUNDATION = Layer(0, "foundation")
BACKENDS = Layer(1, "backends")
TENSOR = Layer(2, "tensor")
AUTOGRAD = Layer(3, "autograd")
OPS = Layer(4, "ops")
BINDER = Layer(5, "binder")
TOP = Layer(6, "top")

# The layers inside lucid-core (CONTRIBUTING.md, "Layers inside lucid-core"). A module may
# import only modules of its own layer or below. A key covers that module and every module
# under it, the longest key wins; a key ending in `.__init__` covers the package's
# `__init__.py` alone (its submodules need rows of their own).
CORE_LAYERS: dict[str, Layer] = {
    # 0 foundation: dtypes, devices, kernel contracts / geometry / reference code on arrays,
    #   hooks and file helpers, the sibling-package loader, Tensor's method stubs (typing only)
    "lucid.dtypes": FOUNDATION,
    "lucid._device": FOUNDATION,
    "lucid.kernels": FOUNDATION,
    "lucid.utils.hooks": FOUNDATION,
    "lucid.utils.files": FOUNDATION,
    "lucid.utils._weak_ids": FOUNDATION,
    "lucid._siblings": FOUNDATION,
    "lucid._memory_format": FOUNDATION,
    "lucid._tensor_methods": FOUNDATION,
    "lucid.utils.__init__": FOUNDATION,
    "lucid.utils._swap": FOUNDATION,  # swap_tensors: slots and classes, no Tensor import
    "lucid._replay": FOUNDATION,
    # 1 backends: arrays only (the NumPy backend, its kernels, threads, numba runtime,
    #   settings); no Tensor, no autograd, no ops, no lucid.random
    "lucid.backends": BACKENDS,
    # 2 tensor: the bare Tensor (storage, dtype/device, autograd fields, properties), its
    #   printing and creation, generators and seeding (lucid._generator; lucid.random is their
    #   public face at the top, with the sampling ops), the arguments of to()
    "lucid._tensor": TENSOR,
    "lucid._repr": TENSOR,
    "lucid._creation": TENSOR,
    "lucid._legacy": TENSOR,
    "lucid._generator": TENSOR,
    "lucid.utils.to_args": TENSOR,
    # 3 autograd: Function, grad modes, the engine and graph, gradcheck, in-place and view
    #   machinery; autocast and the grad scaler
    "lucid.autograd": AUTOGRAD,
    "lucid.amp": AUTOGRAD,
    # activation checkpointing: saved-tensor hooks (autograd) and the RNG state (tensor)
    "lucid.utils.checkpoint": AUTOGRAD,
    # 4 ops: the op tables and their Functions, lucid.special
    "lucid.ops": OPS,
    "lucid.special": OPS,
    # 5 binder: attaches dunders and methods to Tensor (as JAX's array_methods.py)
    "lucid._binder": BINDER,
    # 6 top: what users import, built on everything below
    "lucid.__init__": TOP,
    "lucid._compat": TOP,
    "lucid.linalg": TOP,
    "lucid.fft": TOP,
    "lucid.distributions": TOP,
    "lucid.serialization": TOP,
    "lucid._torch_pickle": TOP,
    "lucid.utils.tensorboard": TOP,
    "lucid.profiler": TOP,
    "lucid._interop": TOP,
    "lucid.utils.dlpack": TOP,
    "lucid.utils.benchmark": TOP,
    "lucid.sparse": TOP,
    "lucid.multiprocessing": TOP,
    "lucid._einops_backend": TOP,
    "lucid.viz": TOP,
    "lucid.accelerator": TOP,
    "lucid.overrides": TOP,  # torch.overrides' names without __torch_function__ dispatch
    "lucid._stream": TOP,  # torch.Stream / torch.Event as torch's CPU build has them
    "lucid.cuda": TOP,
    "lucid.xpu": TOP,
    "lucid.cpu": TOP,
    "lucid.testing": TOP,
    "lucid.random": TOP,
    "lucid.autograd.functional": TOP,
    "lucid.autograd.profiler": TOP,
    "lucid.func": TOP,
    "lucid.utils._pytree": TOP,
    # torch's top-level in-place functions and igamma/igammac (issue 29)
    "lucid._toplevel": TOP,
    "lucid._foreach": TOP,  # torch._foreach_*: Tensor methods over lists
    "lucid._toplevel_nn": TOP,
    # torch._higher_order_ops: cond, while_loop, scan, associative_scan, map
    "lucid._higher_order_ops": TOP,
    "lucid.masked": TOP,
    "lucid.nested": TOP,  # torch.nested's names, refusing (lucid has no nested tensors)
    "lucid.signal": TOP,
    "lucid.compiler": TOP,
    "lucid._dynamo": TOP,
    "lucid.jit": TOP,
    "lucid.fx": TOP,
    "lucid.version": TOP,
    "lucid.futures": TOP,
    "lucid.hub": TOP,
}

UPWARD_FIX = "move the shared code down or call it through a Tensor method the binder attaches"

# Distributions whose import cycles print as `note:` lines instead of failing (measured on
# main f6cdd0a: lucid-core had cycles, every other distribution none). Empty: all enforced.
CYCLES_ALLOWED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    certain: bool = True  # False for `from a import b`: `a.b` may be a module or an attribute
    from_base: bool = False  # the `a` of `from a import b, c` (its names come as their own)
    runtime: bool = True  # False under `if TYPE_CHECKING:`: never runs
    in_function: bool = False  # inside a def: runs at the first call, not at import


@dataclass(frozen=True)
class Edge:
    """Module `source` runs module `target` (file:line says where)."""

    source: str
    target: str
    path: Path
    line: int
    in_function: bool
    via: str | None = None  # set when target is a package above the module imported


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve_relative(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    base = current.split(".") if is_package else current.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dynamic_import(node: ast.Call) -> str | None:
    """`importlib.import_module("lucid.nn")` or `__import__("lucid.nn")` with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _walk(node: ast.AST, runtime: bool, in_function: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    """Every node under `node`, with whether it runs and whether it sits inside a function."""
    for child in ast.iter_child_nodes(node):
        yield child, runtime, in_function
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            yield from _walk_block(child.body, False, in_function)
            yield from _walk_block(child.orelse, runtime, in_function)
            continue
        nested = in_function or isinstance(
            child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        )
        yield from _walk(child, runtime, nested)


def _walk_block(
    body: list[ast.stmt], runtime: bool, in_function: bool
) -> Iterator[tuple[ast.AST, bool, bool]]:
    for statement in body:
        yield statement, runtime, in_function
        yield from _walk(statement, runtime, in_function)


def imports_of(path: Path, src: Path) -> Iterator[Import]:
    """Every module a file imports, `from lucid import nn` counted as `lucid.nn`."""
    current = module_name(path, src)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node, runtime, in_function in _walk(tree, True, False):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, line, runtime=runtime, in_function=in_function)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(node, current, path.name == "__init__.py")
            names = [a.name for a in node.names if a.name != "*"]
            yield Import(base, line, True, bool(names), runtime, in_function)
            for name in names:
                yield Import(f"{base}.{name}", line, False, False, runtime, in_function)
        elif isinstance(node, ast.Call) and (target := _dynamic_import(node)):
            yield Import(target, line, runtime=runtime, in_function=in_function)


def _core_has(module: str, core: Package) -> bool:
    """Whether lucid-core's src has the top-level subpackage or module of `lucid.<x>...`."""
    top = core.src.joinpath(*module.split(".")[:2])
    return top.with_suffix(".py").is_file() or top.is_dir()


def check_file(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    relative = path.relative_to(package.src).as_posix()
    declared = package.declared()
    for imp in imports:
        if imp.module != "lucid" and not imp.module.startswith("lucid."):
            continue
        owner = owner_of(imp.module, packages)
        if owner is None:
            continue  # outside every package's prefixes: not a lucid module at all
        if owner.name == package.name:
            continue
        if relative in NAMESPACE_INITS:
            yield Violation(
                path,
                imp.line,
                f"{relative} imports {imp.module} (shipped by {owner.name}): lucid-core's "
                "namespace __init__ must not import an optional subpackage",
            )
        elif owner.name not in declared:
            yield Violation(
                path,
                imp.line,
                f"{package.name} imports {imp.module}, shipped by {owner.name}, which "
                f'{package.pyproject} does not declare; add "{owner.name}>=X,<Y" to its '
                "dependencies (or an extra), or remove the import",
            )


# Modules named after a torch module whose name starts with `_` but which programs import
# by that name (`torch.utils._pytree`): lucid keeps their API as stable as a public one, so
# sibling packages may import them.
TORCH_NAMED_PUBLIC = frozenset({"lucid.utils._pytree"})


def is_private(module: str) -> bool:
    """Whether a dotted path has a `_`-prefixed part (dunders such as `__version__` are public),
    outside `TORCH_NAMED_PUBLIC`."""
    if module in TORCH_NAMED_PUBLIC or module.rsplit(".", 1)[0] in TORCH_NAMED_PUBLIC:
        return False
    return any(p.startswith("_") and not p.endswith("__") for p in module.split("."))


def check_private(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    reported: set[tuple[int, str]] = set()
    for imp in imports:
        owner = owner_of(imp.module, packages)
        if owner is None or owner.name == package.name or not is_private(imp.module):
            continue
        if (imp.line, imp.module.rsplit(".", 1)[0]) in reported:
            continue  # `from lucid._x import y`: lucid._x is reported, not each name again
        reported.add((imp.line, imp.module))
        yield Violation(
            path,
            imp.line,
            f"{package.name} imports {imp.module}, private to {owner.name}: import a public "
            f"name instead (or give this one a public name in {owner.name})",
        )


def check_unknown(
    path: Path, imports: list[Import], package: Package, packages: dict[str, Package]
) -> Iterator[Violation]:
    core = packages.get(CORE)
    for imp in imports:
        owner = owner_of(imp.module, packages)
        if imp.certain and owner is core and core is not None and imp.module.startswith("lucid."):
            if not _core_has(imp.module, core):
                yield Violation(
                    path, imp.line, f"{package.name} imports {imp.module}, which no package ships"
                )


def check_layout(package: Package) -> Iterator[Violation]:
    if package.name == CORE:
        return
    for relative in NAMESPACE_INITS:
        if (package.src / relative).exists():
            yield Violation(
                package.src / relative,
                1,
                f"{package.name} ships {relative}: only lucid-core may (it extends the namespace "
                "with pkgutil.extend_path; a second copy would shadow it)",
            )


def check_requirements(package: Package, packages: dict[str, Package]) -> Iterator[Violation]:
    for requirement in package.all_requirements():
        name = requirement_name(requirement)
        if name in packages and ("@" in requirement.split(";")[0] or "<" not in requirement):
            yield Violation(
                package.pyproject,
                1,
                f"{package.name} declares sibling {requirement!r}: use a version range like "
                f'"{name}>=0.1,<0.2", never a path, URL or open-ended bound',
            )


# -- layers and cycles ---------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str
    package: Package
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def index_modules(packages: dict[str, Package]) -> dict[str, Module]:
    """Every module of every distribution, by dotted name."""
    modules: dict[str, Module] = {}
    for package in packages.values():
        for path in sorted(package.src.rglob("*.py")):
            name = module_name(path, package.src)
            modules[name] = Module(name, package, path)
    return modules


def layer_of(module: Module) -> Layer | None:
    """The row of `CORE_LAYERS` a lucid-core module falls in (longest key wins)."""
    if module.is_package and (layer := CORE_LAYERS.get(f"{module.name}.__init__")):
        return layer
    best: tuple[int, Layer] | None = None
    for key, layer in CORE_LAYERS.items():
        if key.endswith(".__init__"):
            continue
        if module.name == key or module.name.startswith(key + "."):
            if best is None or len(key) > best[0]:
                best = (len(key), layer)
    return best[1] if best else None


def _packages_above(name: str) -> list[str]:
    """`lucid.a.b.c` -> [`lucid.a.b`, `lucid.a`] (the root `lucid` always runs first)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 1, -1)]


def _target(imp: Import, modules: dict[str, Module]) -> str | None:
    """The most specific existing module an import runs, or None when it names none."""
    parts = imp.module.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if name in modules:
            # `import lucid.vision` names no module; `from lucid import Tensor` reads `lucid`
            return name if i == len(parts) or not imp.certain else None
    return None


def edges_of(module: Module, imports: list[Import], modules: dict[str, Module]) -> Iterator[Edge]:
    """The modules of its own distribution that a module runs, once per import line."""
    ran_before = {module.name, *_packages_above(module.name)}
    seen: set[tuple[str, int]] = set()
    for imp in imports:
        if not imp.runtime or imp.from_base:
            continue  # TYPE_CHECKING never runs; `from a import b` comes as its names
        target = _target(imp, modules)
        if target is None:
            continue
        runs = [(target, None)] + [(above, target) for above in _packages_above(target)]
        for name, via in runs:
            if name == module.name or (via and name in ran_before) or name not in modules:
                continue
            if modules[name].package is not module.package or (name, imp.line) in seen:
                continue
            seen.add((name, imp.line))
            yield Edge(module.name, name, module.path, imp.line, imp.in_function, via)


def check_layers(modules: dict[str, Module], edges: list[Edge]) -> Iterator[Violation]:
    """Every lucid-core module in a row of CORE_LAYERS, and no edge to a higher layer."""
    for module in modules.values():
        if module.package.name == CORE and layer_of(module) is None:
            yield Violation(
                module.path,
                1,
                f"{module.name} is in no layer: add it to the layer table in "
                "tools/check_boundaries.py (CORE_LAYERS)",
            )
    upward: dict[tuple[Path, int, str], list[Edge]] = defaultdict(list)
    for edge in edges:
        low, high = layer_of(modules[edge.source]), layer_of(modules[edge.target])
        if low is not None and high is not None and high.number > low.number:
            upward[edge.path, edge.line, edge.source].append(edge)
    for (path, line, source), found in upward.items():  # one line per import statement
        targets = ", ".join(
            f"{e.target} ({layer_of(modules[e.target])}"
            + (f", the package of {e.via})" if e.via else ")")
            for e in found
        )
        how = " in a function" if found[0].in_function else ""
        yield Violation(
            path,
            line,
            f"{source} ({layer_of(modules[source])}) imports {targets}{how}: {UPWARD_FIX}",
        )


def strongly_connected(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _order(members: list[str], graph: dict[str, set[str]]) -> list[str]:
    """Importers before what they import where possible (Eades, Lin and Smyth's heuristic)."""
    left = set(members)
    out = {m: graph[m] & left for m in members}
    into = {m: {s for s in members if m in graph[s]} for m in members}
    head: list[str] = []
    tail: list[str] = []
    while left:
        changed = True
        while changed:
            changed = False
            for m in sorted(left):
                if not out[m] & left:  # imports nothing left: goes last
                    tail.append(m)
                elif not into[m] & left:  # imported by nothing left: goes first
                    head.append(m)
                else:
                    continue
                left.discard(m)
                changed = True
        if left:
            pick = max(sorted(left), key=lambda m: len(out[m] & left) - len(into[m] & left))
            head.append(pick)
            left.discard(pick)
    return head + tail[::-1]


@dataclass(frozen=True)
class Cycle:
    package: str
    members: list[str]
    closing: list[list[Edge]]  # each: the closing edge, then the shortest way back to its source


def _way_back(
    start: str, goal: str, graph: dict[str, dict[str, Edge]], inside: set[str]
) -> list[Edge]:
    """The fewest edges from start to goal through the component's modules (breadth first)."""
    came: dict[str, Edge | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for target in sorted(graph[node]):
            if target in inside and target not in came:
                came[target] = graph[node][target]
                queue.append(target)
    path: list[Edge] = []
    node = goal
    while (edge := came[node]) is not None:
        path.append(edge)
        node = edge.source
    return path[::-1]


def _reaches(start: str, goal: str, graph: dict[str, set[str]]) -> bool:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        todo += [t for t in graph[node] if t not in seen]
        seen.update(graph[node])
    return False


def _closing_edges(
    members: list[str], graph: dict[str, dict[str, Edge]], rank: dict[str, int]
) -> list[Edge]:
    """Edges of one component whose removal leaves no cycle: every upward one, then few more.

    Inside each layer the modules are ordered importers first by their module-level imports
    and the edges pointing back are cut; then each cut edge whose return would close no cycle
    is put back (module-level ones first): a function-level import is named where one would do.
    """
    inside = set(members)
    edges = [graph[m][t] for m in members for t in sorted(graph[m]) if t in inside]
    # module-level imports set the order, so that function-level ones are cut where possible
    at_import = {m: {t for t, e in graph[m].items() if not e.in_function} for m in members}
    position: dict[str, int] = {}
    for layer in sorted(set(rank.values())):
        group = [m for m in members if rank[m] == layer]
        position.update((m, i) for i, m in enumerate(_order(group, at_import)))
    upward = [e for e in edges if rank[e.target] > rank[e.source]]
    cut = [
        e
        for e in edges
        if rank[e.target] == rank[e.source] and position[e.target] < position[e.source]
    ]
    kept: dict[str, set[str]] = {m: set() for m in members}
    for e in edges:
        if e not in upward and e not in cut:
            kept[e.source].add(e.target)
    for e in sorted(cut, key=lambda e: (e.in_function, str(e.path), e.line)):
        if not _reaches(e.target, e.source, kept):
            kept[e.source].add(e.target)
            cut.remove(e)
    return sorted(upward + cut, key=lambda e: (str(e.path), e.line, e.target))


def find_cycles(package: Package, modules: dict[str, Module], edges: list[Edge]) -> list[Cycle]:
    """The import cycles of one distribution, each with a set of edges that closes it.

    Removing every closing edge leaves no cycle: in lucid-core they are the upward imports of
    the cycle and, inside a layer, the edges that point back in one order of its modules.
    """
    graph: dict[str, dict[str, Edge]] = defaultdict(dict)
    for edge in sorted(edges, key=lambda e: (e.in_function, e.line)):  # module level first
        if modules[edge.source].package is package:
            graph[edge.source].setdefault(edge.target, edge)
            graph[edge.target]  # noqa: B018  (every module a node)
    cycles = []
    for members in strongly_connected(graph):
        rank = dict.fromkeys(members, 0)
        if package.name == CORE:
            rank = {m: (layer.number if (layer := layer_of(modules[m])) else 99) for m in members}
        inside = set(members)
        closing = [
            [edge, *_way_back(edge.target, edge.source, graph, inside)]
            for edge in _closing_edges(members, graph, rank)
        ]
        cycles.append(Cycle(package.name, members, closing))
    return cycles


def _short(edge: Edge, package: Package) -> str:
    return f"{edge.path.relative_to(package.src).as_posix()}:{edge.line}"


def describe_loop(loop: list[Edge], package: Package) -> str:
    """`a -> b (a.py:3) -> a (b.py:5)`: the loop a closing edge makes, every edge located."""
    text = loop[0].source
    for edge in loop:
        via = f", package of {edge.via}" if edge.via else ""
        how = ", in a function" if edge.in_function else ""
        text += f" -> {edge.target} ({_short(edge, package)}{via}{how})"
    return text


def cycle_violations(cycle: Cycle, package: Package) -> Iterator[Violation]:
    for loop in cycle.closing:
        yield Violation(
            loop[0].path,
            loop[0].line,
            f"import cycle in {cycle.package} ({len(cycle.members)} modules): "
            f"{describe_loop(loop, package)}; cut this edge ({UPWARD_FIX}) or another of "
            "the loop",
        )


def cycle_report(cycles_by_package: dict[str, list[Cycle]], packages: dict[str, Package]) -> str:
    """The `--cycles` text: every distribution's cycles, members and closing edges."""
    lines = []
    for name, cycles in cycles_by_package.items():
        enforced = "allowed for now (note)" if name in CYCLES_ALLOWED else "enforced"
        lines.append(f"{name}: {len(cycles) or 'no'} import cycle(s), {enforced}")
        for cycle in cycles:
            lines.append(f"  cycle of {len(cycle.members)} modules: {', '.join(cycle.members)}")
            lines.append(f"  closed by {len(cycle.closing)} edge(s); each, then its way back:")
            for loop in cycle.closing:
                lines.append(f"    {loop[0].path}:{loop[0].line}:")
                lines.append(f"      {describe_loop(loop, packages[name])}")
    return "\n".join(lines)


# -- the whole check -----------------------------------------------------------------------


@dataclass
class Report:
    violations: list[Violation]
    notes: list[Violation]
    cycles: dict[str, list[Cycle]]
    files: int


def analyse(root: Path) -> Report:
    """Every violation, note and cycle in the workspace at root."""
    packages = load_packages(root)
    modules = index_modules(packages)
    report = Report([], [], {}, 0)
    edges: list[Edge] = []
    for package in packages.values():
        report.violations += check_layout(package)
        report.violations += check_requirements(package, packages)
        for path in sorted(package.src.rglob("*.py")):
            report.files += 1
            imports = [i for i in imports_of(path, package.src) if i.module.startswith("lucid")]
            report.violations += check_file(path, imports, package, packages)
            report.violations += check_private(path, imports, package, packages)
            report.violations += check_unknown(path, imports, package, packages)
            edges += edges_of(modules[module_name(path, package.src)], imports, modules)
    core_edges = [e for e in edges if modules[e.source].package.name == CORE]
    report.violations += check_layers(modules, core_edges)
    for package in packages.values():
        cycles = find_cycles(package, modules, edges)
        report.cycles[package.name] = cycles
        for cycle in cycles:
            found = list(cycle_violations(cycle, package))
            allowed = package.name in CYCLES_ALLOWED and package.name != CORE
            (report.notes if allowed else report.violations).extend(found)
    return report


def check(root: Path) -> tuple[list[Violation], int]:
    """All violations in the workspace at root, and the number of files read."""
    report = analyse(root)
    return report.violations, report.files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument(
        "--cycles", action="store_true", help="print the import cycles of every distribution"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    report = analyse(root)
    if args.cycles:
        print(cycle_report(report.cycles, load_packages(root)))
        failing = [n for n, c in report.cycles.items() if c and n not in CYCLES_ALLOWED]
        return 1 if failing else 0
    for violation in report.violations:
        print(violation)
    for note in report.notes:
        print(f"note: {note}")
    if report.violations:
        print(
            f"boundary check FAILED: {len(report.violations)} violation(s) in {report.files} files"
        )
        return 1
    print(f"boundary check OK: {report.files} files in {len(load_packages(root))} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
