"""The model registry: ``create_model(name, **kwargs)``, ``list_models(pattern)``,
``model_info(name)``, ``register_model``.

Each builder of the zoo is registered with its metadata (:class:`ModelInfo`): the task, the
paper, the parameter count of the default configuration and the default input size. The counts
are held to account by the tests (every builder is built and counted; the torchvision families
are also compared with torchvision's own builders) and the model-zoo page of the docs is
generated from them.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ModelInfo:
    """What the registry knows about a builder.

    Attributes:
        name: the registered name (``create_model(name)``).
        family: the family (module) it belongs to, e.g. ``"resnet"``.
        task: ``"image-classification"`` for every classifier of the zoo.
        paper: the paper that introduced the architecture (authors, title, venue and year).
        num_params: parameters of the default configuration (``create_model(name)``).
        input_size: the default input, ``(channels, height, width)``.
        reference: where ``num_params`` is checked against (e.g. ``"torchvision"``, ``"paper"``).
    """

    name: str
    family: str | None = None
    task: str | None = None
    paper: str | None = None
    num_params: int | None = None
    input_size: tuple[int, ...] | None = None
    reference: str | None = None


_REGISTRY: dict[str, Callable[..., Any]] = {}
_INFO: dict[str, ModelInfo] = {}


@overload
def register_model(
    fn: F,
    *,
    name: str | None = None,
    family: str | None = None,
    task: str | None = None,
    paper: str | None = None,
    num_params: int | None = None,
    input_size: tuple[int, ...] | None = None,
    reference: str | None = None,
) -> F: ...


@overload
def register_model(
    fn: None = None,
    *,
    name: str | None = None,
    family: str | None = None,
    task: str | None = None,
    paper: str | None = None,
    num_params: int | None = None,
    input_size: tuple[int, ...] | None = None,
    reference: str | None = None,
) -> Callable[[F], F]: ...


def register_model(
    fn: F | None = None,
    *,
    name: str | None = None,
    family: str | None = None,
    task: str | None = None,
    paper: str | None = None,
    num_params: int | None = None,
    input_size: tuple[int, ...] | None = None,
    reference: str | None = None,
) -> Any:
    """Register a model factory under its function name (or ``name``); usable as a decorator,
    bare or with the metadata of :class:`ModelInfo`.

    >>> @register_model
    ... def tiny_mlp(num_classes: int = 10) -> nn.Module: ...
    >>> @register_model(task="image-classification", num_params=1234, input_size=(1, 28, 28))
    ... def tiny_cnn(num_classes: int = 10) -> nn.Module: ...
    """

    def deco(f: F) -> F:
        key = name or f.__name__
        if key in _REGISTRY and _REGISTRY[key] is not f:
            raise ValueError(f"a model named {key!r} is already registered")
        module = getattr(f, "__module__", "") or ""
        fam = family or (module.rsplit(".", 1)[-1] if module.startswith("lucid.models.") else None)
        builder = _takes_weights_argument(f, key)
        _REGISTRY[key] = builder
        _INFO[key] = ModelInfo(key, fam, task, paper, num_params, input_size, reference)
        return builder

    return deco(fn) if fn is not None else deco


def list_models(pattern: str | None = None, *, task: str | None = None) -> list[str]:
    """Registered model names, sorted; ``pattern`` is a shell-style wildcard (``"resnet*"``),
    ``task`` keeps the builders registered for that task (``"image-classification"``)."""
    names = sorted(_REGISTRY)
    if pattern is not None:
        names = [n for n in names if fnmatch.fnmatch(n, pattern)]
    if task is not None:
        names = [n for n in names if _INFO[n].task == task]
    return names


def _unknown(name: str) -> ValueError:
    close = [n for n in _REGISTRY if n.startswith(name[:3])]
    hint = f"; did you mean one of {close}?" if close else ""
    return ValueError(f"unknown model {name!r}{hint} (see lucid.models.list_models())")


def create_model(name: str, **kwargs: Any) -> Any:
    """Build a registered model: ``create_model("resnet18", num_classes=10)``."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise _unknown(name) from None
    return factory(**kwargs)


def get_model_factory(name: str) -> Callable[..., Any]:
    """The registered function that builds the model ``name``."""
    if name not in _REGISTRY:
        raise _unknown(name)
    return _REGISTRY[name]


def model_info(name: str) -> ModelInfo:
    """The registry's metadata of ``name``: task, paper, parameter count, default input size.

    >>> model_info("resnet18").num_params
    11689512
    """
    if name not in _INFO:
        raise _unknown(name)
    return _INFO[name]


def classifier(
    paper: str,
    num_params: int,
    input_size: tuple[int, ...] = (3, 224, 224),
    reference: str = "torchvision",
) -> Callable[[F], F]:
    """``register_model`` for an image classifier: its paper, its parameter count for 1000
    classes, its default input and where that count is checked (``"torchvision"``, ``"paper"``)."""
    return register_model(task="image-classification", paper=paper, num_params=num_params,
                          input_size=input_size, reference=reference)  # fmt: skip


def _takes_weights_argument(f: F, key: str) -> F:
    """``f`` taking torchvision's ``weights=None``, ``progress=True`` and legacy
    ``pretrained=False`` keywords, as its builders do (``resnet18(weights=None)``). Lucid ships
    no pretrained weights and downloads nothing: any other value raises, saying how to load a
    checkpoint instead."""

    @functools.wraps(f)
    def builder(*args: Any, weights: Any = None, progress: bool = True, **kwargs: Any) -> Any:
        pretrained = kwargs.pop("pretrained", False)
        if weights is not None or pretrained:
            given = f"weights={weights!r}" if weights is not None else f"pretrained={pretrained!r}"
            raise ValueError(
                f"{key}: lucid.models has no pretrained weights to download (got {given}); "
                f"build the model with weights=None and load a checkpoint: "
                f"model.load_state_dict(lucid.load(path)) (torch.save files load too)"
            )
        return f(*args, **kwargs)

    builder.__wrapped__ = f
    return builder  # type: ignore[return-value]
