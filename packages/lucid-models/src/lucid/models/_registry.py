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
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar, overload

import lucid
from lucid.models._api import WeightsEnum, weights_of

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
_NAME_OF: dict[int, str] = {}  # id(builder) -> its registered name


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
        _NAME_OF[id(builder)] = key
        _INFO[key] = ModelInfo(key, fam, task, paper, num_params, input_size, reference)
        return builder

    return deco(fn) if fn is not None else deco


def list_models(
    module: ModuleType | str | None = None,
    include: Iterable[str] | str | None = None,
    exclude: Iterable[str] | str | None = None,
    *,
    task: str | None = None,
) -> list[str]:
    """Registered model names, sorted (torchvision's ``list_models``).

    ``module`` keeps the builders defined directly in that package's modules
    (``list_models(module=lucid.models.segmentation)``; ``lucid.models`` itself leaves out its
    sub-packages, as torchvision's); a string there is a shell-style wildcard, lucid's older
    ``list_models("resnet*")``. ``include``/``exclude``: wildcards (or lists of them) that keep
    / then drop names. ``task`` keeps the builders registered for that task
    (``"image-classification"``).
    """
    if isinstance(module, str):
        include = [module, *([include] if isinstance(include, str) else include or [])]
        module = None
    names = {
        n for n, f in _REGISTRY.items()
        if module is None or f.__module__.rsplit(".", 1)[0] == module.__name__
    }  # fmt: skip
    if include:
        patterns = [include] if isinstance(include, str) else list(include)
        names = {n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)}
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else list(exclude)
        names = {n for n in names if not any(fnmatch.fnmatch(n, p) for p in patterns)}
    if task is not None:
        names = {n for n in names if _INFO[n].task == task}
    return sorted(names)


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


def get_model(name: str, **config: Any) -> Any:
    """Build the model registered as ``name`` (torchvision's ``get_model``):
    ``get_model("resnet50", weights="DEFAULT")``."""
    return get_model_builder(name)(**config)


def get_model_builder(name: str) -> Callable[..., Any]:
    """The builder registered as ``name`` (torchvision's ``get_model_builder``; case-blind)."""
    name = name.lower()
    if name not in _REGISTRY:
        raise ValueError(f"Unknown model {name}")
    return _REGISTRY[name]


def get_model_weights(name: Callable[..., Any] | str) -> type[WeightsEnum]:
    """The weights enum of a builder, given as the builder or its registered name
    (torchvision's ``get_model_weights``): ``get_model_weights("resnet50")`` is
    ``ResNet50_Weights``."""
    key = name if isinstance(name, str) else _NAME_OF.get(id(name), "")
    if isinstance(name, str):
        get_model_builder(name)
        key = name.lower()
    enum = weights_of(key)
    if enum is None:
        raise ValueError(
            f"The WeightsEnum class for the specific method couldn't be retrieved: "
            f"{key or getattr(name, '__name__', name)!r} has no pretrained weights in torchvision"
        )
    return enum


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


def _overwrite(kwargs: dict[str, Any], param: str, value: Any) -> None:
    """torchvision's ``_ovewrite_named_param``: the weights fix ``param`` to ``value``."""
    if kwargs.get(param) is not None and kwargs[param] != value:
        raise ValueError(
            f"The parameter '{param}' expected value {value} but got {kwargs[param]} instead."
        )
    kwargs[param] = value


def _weights_config(key: str, weights: WeightsEnum, kwargs: dict[str, Any]) -> Any:
    """What torchvision's builder ``key`` sets in its arguments for ``weights``; returns what to
    do to the model once the checkpoint is loaded (or None)."""
    if "categories" in weights.meta and weights.meta["categories"] is not None:
        _overwrite(kwargs, "num_classes", len(weights.meta["categories"]))
    if key.startswith("vit_"):
        _overwrite(kwargs, "image_size", weights.meta["min_size"][0])
    if key == "maxvit_t":
        _overwrite(kwargs, "input_size", weights.meta["min_size"])
    if key.endswith(("_fpn", "_fpn_v2")):  # detection: its checkpoints' frozen batch norms
        kwargs.setdefault("frozen_batch_norm", True)
    if key.startswith(("fcn_", "deeplabv3_", "lraspp_")):
        kwargs["weights_backbone"] = None
        if not key.startswith("lraspp_"):
            _overwrite(kwargs, "aux_loss", True)
    if key in ("inception_v3", "googlenet"):
        aux = kwargs.get("aux_logits", key == "inception_v3")  # torchvision's defaults
        kwargs.setdefault("transform_input", True)
        _overwrite(kwargs, "aux_logits", True)

        def drop_aux(model: Any) -> None:
            if not aux:
                model.aux_logits = False
                if key == "inception_v3":
                    model.AuxLogits = None
                else:
                    model.aux1 = None
                    model.aux2 = None

        return drop_aux
    return None


_DENSENET_KEY = re.compile(
    r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$"
)


def _checkpoint_keys(key: str, state: dict[str, Any], model: Any) -> dict[str, Any]:
    """A torchvision checkpoint as the model names it: DenseNet's old ``norm.1`` is ``norm1``
    (the renaming its ``_load_state_dict`` does), and the batch norms of checkpoints older than
    their ``num_batches_tracked`` counter start it at 0 (what torch's BatchNorm does for such
    state dicts)."""
    out = {}
    for k, v in state.items():
        m = _DENSENET_KEY.match(k) if key.startswith("densenet") else None
        out[m.group(1) + m.group(2) if m else k] = v
    for k, v in model.state_dict().items():
        stem = k.removesuffix("num_batches_tracked")
        if stem != k and k not in out and stem + "running_mean" in out:
            out[k] = lucid.zeros_like(v)
    return out


def _takes_weights_argument(f: F, key: str) -> F:
    """``f`` taking torchvision's ``weights=None``, ``progress=True`` and legacy
    ``pretrained=False`` keywords, as its builders do (``resnet18(weights="DEFAULT")``).

    ``weights`` is a member of the builder's enum (``get_model_weights(key)``), its name, or
    ``"DEFAULT"``; ``pretrained=True`` means ``DEFAULT`` (torchvision's legacy form). The
    builder then takes the configuration the weights fix (``num_classes`` from the categories
    ...) and loads ``weights.get_state_dict()``: read from torch hub's cache, never downloaded.
    """

    @functools.wraps(f)
    def builder(*args: Any, weights: Any = None, progress: bool = True, **kwargs: Any) -> Any:
        pretrained = kwargs.pop("pretrained", False)
        enum = weights_of(key)
        config_key = key
        if key.startswith("quantized_"):  # torchvision.models.quantization's builders
            if kwargs.get("quantize", False):
                return f(*args, **kwargs)  # it raises: lucid has no int8 kernels
            config_key = key.removeprefix("quantized_")  # the float model and its weights
            enum = weights_of(config_key)
        if pretrained and weights is None:
            weights = "DEFAULT"
        if weights is None:
            return f(*args, **kwargs)
        if enum is None:
            given = f"weights={weights!r}" if not pretrained else "pretrained=True"
            raise ValueError(
                f"{key}: torchvision has no pretrained weights for this builder (got {given}); "
                f"build it with weights=None and load a checkpoint: "
                f"model.load_state_dict(lucid.load(path)) (torch.save files load too)"
            )
        weights = enum.verify(weights)
        after = _weights_config(config_key, weights, kwargs)
        model = f(*args, **kwargs)
        state = weights.get_state_dict(progress=progress, check_hash=True)
        model.load_state_dict(_checkpoint_keys(config_key, state, model))
        if after is not None:
            after(model)
        return model

    return builder  # type: ignore[return-value]
