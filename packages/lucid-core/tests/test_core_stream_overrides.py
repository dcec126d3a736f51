"""``lucid.Stream``/``lucid.Event`` as torch's CPU build has them, and ``lucid.overrides``'
names without ``__torch_function__`` dispatch (diffusers' hooks name ``torch.Stream`` and
subclass ``torch.overrides.TorchFunctionMode`` at import)."""

import pytest

import lucid


def _behaviour(mod):
    """What a program sees of the CPU stream and event, as comparable values."""
    s, e = mod.Stream(), mod.Event()
    out = {
        "query": s.query(), "sync": s.synchronize(), "device": str(s.device),
        "index": s.device_index, "id": s.stream_id, "eq": s == mod.Stream(),
        "hash": hash(s) == hash(mod.Stream()), "wait_event": s.wait_event(e),
        "e_query": e.query(), "e_sync": e.synchronize(), "e_wait": e.wait(),
        "repr": repr(s).split(".", 1)[1],
        "e_repr": repr(mod.Event(enable_timing=True)).split(".", 1)[1],
    }  # fmt: skip
    with s:
        out["ctx"] = True
    for name, call in (("record", e.record), ("record_event", s.record_event)):
        with pytest.raises(RuntimeError) as info:
            call()
        out[name] = str(info.value)
    with pytest.raises(ValueError) as info:
        e.elapsed_time(mod.Event())
    out["elapsed"] = str(info.value)
    with pytest.raises(RuntimeError) as info:
        mod.Stream("cuda")
    out["cuda"] = str(info.value)
    return out


@pytest.mark.parity
def test_stream_and_event_as_torch_cpu():
    torch = pytest.importorskip("torch")
    assert _behaviour(lucid) == _behaviour(torch)


def test_stream_refuses_mlx_device():
    with pytest.raises(RuntimeError, match="no streams or events on 'mlx'"):
        lucid.Stream("mlx")


def test_overrides_without_dispatch():
    o = lucid.overrides
    t = lucid.ones(2)
    assert o.has_torch_function((t,)) is False
    assert o.has_torch_function_unary(t) is False
    assert o.has_torch_function_variadic(t, t) is False
    assert o.is_tensor_like(t) and not o.is_tensor_like(1.0)

    class Like:
        def __torch_function__(self, *a, **k):
            return None

    assert o.is_tensor_like(Like())
    assert o.is_tensor_method_or_property(lucid.Tensor.add)
    assert not o.is_tensor_method_or_property(lucid.add)
    assert o.get_ignored_functions() == set() and o.get_overridable_functions() == {}
    assert o.wrap_torch_function(lambda *a: a)(lucid.add) is lucid.add
    with o.enable_reentrant_dispatch():
        pass
    with pytest.raises(RuntimeError, match="no __torch_function__ dispatch"):
        o.handle_torch_function(lucid.add, (t,), t, t)


def test_torch_function_mode_subclasses_but_does_not_enter():
    class Skip(lucid.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = Skip()
    with pytest.raises(RuntimeError, match="Skip cannot be entered"):
        with mode:
            pass
    base = lucid.overrides.BaseTorchFunctionMode()
    out = base.__torch_function__(lucid.add, (), (lucid.ones(1), lucid.ones(1)))
    assert float(out.item()) == 2.0
