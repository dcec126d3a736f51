"""lucid.viz: the DOT and Mermaid text of autograd graphs, and rendering where dot exists."""

from __future__ import annotations

import builtins
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import lucid
import lucid.viz as viz


def _parse_dot(src: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    nodes = dict(re.findall(r'^\s+(n\d+) \[label="([^"]*)"', src, re.M))
    edges = re.findall(r"^\s+(n\d+) -> (n\d+);", src, re.M)
    return nodes, edges


def _model() -> tuple[Any, Any, Any]:
    w = lucid.randn(3, 2, requires_grad=True)
    b = lucid.zeros(2, requires_grad=True)
    y = ((lucid.ones(4, 3) @ w + b).relu() * w.sum()).sum()
    return y, w, b


def test_dot_structure() -> None:
    y, w, b = _model()
    src = viz.make_dot(y, params={"w": w, "b": b}).source
    assert src.startswith("digraph") and src.rstrip().endswith("}")
    nodes, edges = _parse_dot(src)
    by_label = {label.split("\\n")[0]: nid for nid, label in nodes.items()}
    assert nodes[by_label["w"]] == "w\\n(3, 2)"
    assert nodes[by_label["b"]] == "b\\n(2,)"
    assert nodes[by_label["MmBackward0"]] == "MmBackward0\\n(4, 2)"
    labels = sorted(label.split("\\n")[0] for label in nodes.values())
    ops = ["SumBackward0", "MulBackward0", "ReluBackward0", "SumBackward0", "AddBackward0"]
    assert labels == sorted(["output", "w", "b", "MmBackward0", *ops])
    # w feeds both the matmul and the sum: one node, two edges out.
    outgoing_w = [dst for src_, dst in edges if src_ == by_label["w"]]
    assert len(outgoing_w) == 2
    assert (by_label["b"], by_label["AddBackward0"]) in edges
    assert (by_label["MmBackward0"], by_label["AddBackward0"]) in edges
    assert len(edges) == 9
    # Leaves are styled apart from operations.
    assert re.search(r'n\d+ \[label="w\\n\(3, 2\)", shape=box, style=filled, fillcolor=lightblue',
                     src)  # fmt: skip


def test_unnamed_leaves_show_shapes_and_show_shapes_false() -> None:
    y, w, b = _model()
    nodes, _ = _parse_dot(viz.make_dot(y).source)
    assert "(3, 2)" in nodes.values() and "(2,)" in nodes.values()
    nodes, _ = _parse_dot(viz.make_dot(y, params={"w": w}, show_shapes=False).source)
    assert "w" in nodes.values() and "MmBackward0" in nodes.values()
    assert not any("(" in label for nid, label in nodes.items() if label != "(2,)")


def test_mermaid_structure() -> None:
    y, w, b = _model()
    text = viz.to_mermaid(y, params={"w": w, "b": b})
    lines = text.splitlines()
    assert lines[0] == "flowchart TB"
    assert any(re.fullmatch(r'\s+n\d+\[/"w<br/>\(3, 2\)"/\]', line) for line in lines)
    assert any(re.fullmatch(r'\s+n\d+\["MmBackward0<br/>\(4, 2\)"\]', line) for line in lines)
    assert len([line for line in lines if "-->" in line]) == 9
    assert any(
        line.strip().startswith("class ") and line.strip().endswith(" leaf") for line in lines
    )


def test_multiple_outputs_leaf_root_and_quotes() -> None:
    x = lucid.randn(2, requires_grad=True)
    a, b = x * 2, x.exp()
    nodes, edges = _parse_dot(viz.make_dot([a, b], params={'my "x"': x}).source)
    outs = [n for n, label in nodes.items() if label.startswith("output")]
    assert len(outs) == 2
    assert sum(1 for label in nodes.values() if label.startswith("my")) == 1
    src = viz.make_dot(x, params={'my "x"': x}).source
    assert 'label="my \\"x\\"\\n(2,)"' in src
    assert "#quot;" in viz.to_mermaid(x, params={'my "x"': x})


def test_deep_graph_does_not_recurse() -> None:
    x = lucid.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    nodes, edges = _parse_dot(viz.make_dot(y).source)
    assert len(nodes) == 3002 and len(edges) == 3001


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs the Graphviz dot program")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_render(tmp_path: Path, fmt: str) -> None:
    y, w, b = _model()
    out = viz.make_dot(y, params={"w": w}).render(tmp_path / f"g.{fmt}")
    data = Path(out).read_bytes()
    if fmt == "svg":
        assert b"<svg" in data and b"MmBackward0" in data
    else:
        assert data.startswith(b"\x89PNG")
    viz.make_dot(y).render(tmp_path / "noext", format="svg")
    assert (tmp_path / "noext").read_bytes().lstrip().startswith(b"<?xml")


def test_render_without_graphviz_says_what_to_install(tmp_path: Path, monkeypatch: Any) -> None:
    real_import = builtins.__import__

    def no_graphviz(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "graphviz":
            raise ImportError("no graphviz")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_graphviz)
    monkeypatch.setattr(viz.shutil, "which", lambda _: None)
    y, _, _ = _model()
    with pytest.raises(RuntimeError, match=r"pip install graphviz.*apt-get install graphviz"):
        viz.make_dot(y).render(tmp_path / "g.svg")
    assert not (tmp_path / "g.svg").exists()
    with pytest.raises(ValueError, match="format"):
        viz.make_dot(y).pipe("gif")
