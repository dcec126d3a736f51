"""``lucid.fx``: torch.fx's names, the import-time ones working, tracing refused in words."""

from __future__ import annotations

import pytest

import lucid


def test_wrap_gives_its_argument_back_as_a_decorator_and_by_name() -> None:
    @lucid.fx.wrap
    def double(x: lucid.Tensor) -> lucid.Tensor:
        return x * 2

    assert double(lucid.ones(2)).tolist() == [2.0, 2.0]
    assert lucid.fx.wrap("len") == "len"
    assert lucid.fx.has_side_effect(double) is double


def test_proxy_and_node_are_classes_no_lucid_value_is_an_instance_of() -> None:
    assert not isinstance(lucid.ones(2), lucid.fx.Proxy)
    assert not isinstance(3, lucid.fx.Node)


def test_map_arg_rebuilds_nested_arguments() -> None:
    arg = (1, [2, {"a": 3}], slice(0, 4, 2))
    assert lucid.fx.map_arg(arg, lambda n: n) == arg


@pytest.mark.parametrize(
    "call",
    [lambda: lucid.fx.symbolic_trace(lambda x: x), lambda: lucid.fx.Tracer(),
     lambda: lucid.fx.GraphModule(None, None), lambda: lucid.fx.Graph(),
     lambda: lucid.fx.replace_pattern(None, None, None), lambda: lucid.fx.Proxy(None)],
)  # fmt: skip
def test_tracing_raises_naming_lucid_compile(call: object) -> None:
    with pytest.raises(NotImplementedError, match="lucid has no torch.fx graph capture"):
        call()  # type: ignore[operator]


@pytest.mark.parity
def test_the_names_are_torch_fx_all() -> None:
    torch = pytest.importorskip("torch")
    assert sorted(lucid.fx.__all__) == sorted(torch.fx.__all__)
