"""Drawing the autograd graph behind a tensor: Graphviz DOT, Mermaid, and rendered SVG/PNG.

>>> w = lucid.randn(3, 2, requires_grad=True)
>>> y = (lucid.ones(4, 3) @ w).relu().sum()
>>> dot = lucid.viz.make_dot(y, params={"w": w})
>>> print(dot.source)            # Graphviz text; dot.render("graph.svg") draws it
>>> print(lucid.viz.to_mermaid(y, params={"w": w}))

Operation nodes show the backward node's name (``MatmulBackward0``) and its output shape;
leaf tensors that require grad are drawn as separate, coloured nodes, named when ``params``
maps names to them (like torchviz's ``make_dot(y, params=dict(model.named_parameters()))``).
Edges run in the direction data flows: from inputs to the operation that consumed them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lucid._tensor import Tensor
from lucid.utils.files import atomic_write

_INSTALL_HINT = (
    "rendering needs Graphviz: install the Python package with `pip install graphviz` and the "
    "`dot` program with your system package manager (`apt-get install graphviz`, "
    "`brew install graphviz`, `conda install graphviz`)"
)


@dataclass
class _Node:
    id: str
    label: str
    kind: str  # "op", "leaf", "output"


@dataclass
class GraphData:
    """The graph as plain data: nodes (id, label, kind) and edges (src id, dst id)."""

    nodes: list[_Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)


def _shape(shape: Any) -> str:
    return str(tuple(int(s) for s in shape))


def build_graph(
    roots: Tensor | Iterable[Tensor], params: Mapping[str, Tensor] | None = None,
    show_shapes: bool = True,
) -> GraphData:  # fmt: skip
    """Walk ``grad_fn`` edges (iteratively) from ``roots`` and collect nodes and edges."""
    outs = [roots] if isinstance(roots, Tensor) else list(roots)
    names = {id(t): name for name, t in (params or {}).items()}
    graph = GraphData()
    ids: dict[Any, str] = {}  # keyed by id() of live graph objects, or ("out", i)

    def node_id(obj: Any, label: str, kind: str) -> tuple[str, bool]:
        key = obj if isinstance(obj, tuple) else id(obj)
        if key in ids:
            return ids[key], False
        ids[key] = f"n{len(ids)}"
        graph.nodes.append(_Node(ids[key], label, kind))
        return ids[key], True

    def leaf_label(t: Tensor) -> str:
        name = names.get(id(t))
        parts = [name] if name else []
        if show_shapes or not name:
            parts.append(_shape(t.shape))
        return "\n".join(parts)

    stack: list[Any] = []
    for i, out in enumerate(outs):
        label = names.get(id(out)) or ("output" if len(outs) == 1 else f"output {i}")
        oid, _ = node_id(("out", i), label + ("\n" + _shape(out.shape) if show_shapes else ""),
                         "output")  # fmt: skip
        if out.grad_fn is None:
            src, _ = node_id(out, leaf_label(out), "leaf")
            graph.edges.append((src, oid))
            continue
        nid, new = node_id(out.grad_fn, _op_label(out.grad_fn, show_shapes), "op")
        graph.edges.append((nid, oid))
        if new:
            stack.append(out.grad_fn)
    while stack:
        fn = stack.pop()
        dst = ids[id(fn)]
        for edge in getattr(fn, "_edges", ()):
            if edge is None:
                continue
            if isinstance(edge, tuple):
                nxt = edge[0]
                src, new = node_id(nxt, _op_label(nxt, show_shapes), "op")
                if new:
                    stack.append(nxt)
            else:
                src, _ = node_id(edge, leaf_label(edge), "leaf")
            graph.edges.append((src, dst))
    return graph


def _op_label(fn: Any, show_shapes: bool) -> str:
    label = str(fn.name)
    meta = getattr(fn, "_out_meta", None)
    if show_shapes and meta:
        label += "\n" + " ".join(_shape(shape) for shape, _ in meta)
    return label


class Digraph:
    """What :func:`make_dot` returns: ``.source`` is the DOT text; ``render`` draws it."""

    def __init__(self, graph: GraphData) -> None:
        self.graph = graph
        self.source = _to_dot(graph)

    def __str__(self) -> str:
        return self.source

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write the DOT text to ``path`` and return the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return os.fspath(path)

    def pipe(self, format: str = "svg") -> bytes:  # noqa: A002
        """The rendered image as bytes (needs Graphviz, see :meth:`render`)."""
        if format not in ("svg", "png", "pdf"):
            raise ValueError(f"format must be 'svg', 'png' or 'pdf', got {format!r}")
        try:
            import graphviz
        except ImportError:
            graphviz = None
        if graphviz is not None:
            try:
                data: bytes = graphviz.Source(self.source).pipe(format=format)
                return data
            except graphviz.ExecutableNotFound:
                raise RuntimeError(
                    f"the Graphviz `dot` program was not found; {_INSTALL_HINT}"
                ) from None
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError(
                f"neither the graphviz package nor `dot` is installed; {_INSTALL_HINT}"
            )
        done = subprocess.run([dot, f"-T{format}"], input=self.source.encode(), capture_output=True,
                              check=False)  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    def render(self, path: str | os.PathLike[str], format: str | None = None) -> str:  # noqa: A002
        """Draw the graph to ``path`` as SVG or PNG (from ``format`` or the file suffix).

        Uses the ``graphviz`` Python package and its ``dot`` program (or ``dot`` directly);
        without them raises an error saying what to install. The file is written atomically.
        """
        target = os.fspath(path)
        fmt = format or os.path.splitext(target)[1].lstrip(".").lower() or "svg"
        data = self.pipe(fmt)
        atomic_write(target, lambda f: f.write(data))
        return target

    def _repr_svg_(self) -> str:  # Jupyter
        return self.pipe("svg").decode()


_STYLE = {
    "op": 'shape=box, style="rounded,filled", fillcolor=lightgrey',
    "leaf": "shape=box, style=filled, fillcolor=lightblue",
    "output": "shape=box, style=filled, fillcolor=darkolivegreen1",
}


def _dot_text(label: str) -> str:
    return label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _to_dot(graph: GraphData) -> str:
    lines = ["digraph lucid_graph {", '    graph [rankdir=TB, fontname="Helvetica"];',
             '    node [fontname="Helvetica", fontsize=11];']  # fmt: skip
    for n in graph.nodes:
        lines.append(f'    {n.id} [label="{_dot_text(n.label)}", {_STYLE[n.kind]}];')
    for src, dst in graph.edges:
        lines.append(f"    {src} -> {dst};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def make_dot(
    tensor: Tensor | Iterable[Tensor],
    params: Mapping[str, Tensor] | None = None,
    show_shapes: bool = True,
) -> Digraph:
    """The autograd graph behind ``tensor`` as a :class:`Digraph` (``.source`` is DOT text)."""
    return Digraph(build_graph(tensor, params, show_shapes))


_MERMAID_SHAPE = {"op": ('["', '"]'), "leaf": ('[/"', '"/]'), "output": ('(["', '"])')}


def _mermaid_text(label: str) -> str:
    return label.replace('"', "#quot;").replace("\n", "<br/>")


def to_mermaid(
    tensor: Tensor | Iterable[Tensor],
    params: Mapping[str, Tensor] | None = None,
    show_shapes: bool = True,
) -> str:
    """The autograd graph behind ``tensor`` as a Mermaid flowchart."""
    graph = build_graph(tensor, params, show_shapes)
    lines = ["flowchart TB"]
    for n in graph.nodes:
        left, right = _MERMAID_SHAPE[n.kind]
        lines.append(f"    {n.id}{left}{_mermaid_text(n.label)}{right}")
    for src, dst in graph.edges:
        lines.append(f"    {src} --> {dst}")
    lines.append("    classDef leaf fill:#add8e6")
    lines.append("    classDef output fill:#caff70")
    for kind in ("leaf", "output"):
        members = [n.id for n in graph.nodes if n.kind == kind]
        if members:
            lines.append(f"    class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"


__all__ = ["Digraph", "GraphData", "build_graph", "make_dot", "to_mermaid"]
