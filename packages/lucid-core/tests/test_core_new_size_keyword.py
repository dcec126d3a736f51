"""``new_zeros``/``new_ones``/``new_empty`` take the size as ``size=`` too, as torch's (its
``flex_attention.noop_mask`` calls ``batch.new_ones(size=(), dtype=torch.bool)``)."""

import pytest

import lucid


@pytest.mark.parametrize("name, fill", [("new_zeros", 0), ("new_ones", 1), ("new_empty", None)])
@pytest.mark.parametrize("size", [(), (3,), (2, 3), [2, 1]])
def test_size_keyword(name, fill, size):
    t = lucid.ones(2, dtype=lucid.float64)
    out = getattr(t, name)(size=size, dtype=lucid.bool if fill is not None else None)
    assert tuple(out.shape) == tuple(size)
    if fill is not None:
        assert out.dtype is lucid.bool
        assert bool((out == bool(fill)).all()) or out.numel() == 0
    assert tuple(getattr(t, name)(*size).shape) == tuple(size)


def test_size_twice_or_unknown_keyword():
    t = lucid.ones(2)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        t.new_ones((2,), size=(3,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        t.new_zeros(shape=(3,))
