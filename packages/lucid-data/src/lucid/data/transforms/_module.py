"""The base of the v1 transforms that torchvision makes ``torch.nn.Module``s (``Normalize``,
``ColorJitter``, ``RandomResizedCrop``, ...; not ``Compose``, ``ToTensor``, ``Lambda``).

With lucid-nn installed they are ``lucid.nn.Module``s, as torchvision's are torch modules: they
go into ``nn.Sequential`` (vit-pytorch's Dino builds its augmentation as
``nn.Sequential(RandomApply(T.ColorJitter(...)), T.RandomGrayscale(), ...)``), a module that
holds one registers it, and ``.to()``/``.train()`` walk through them; ``forward`` is the
transform's call. lucid-data does not depend on lucid-nn: without it they are plain callables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["TransformModule"]

if TYPE_CHECKING:

    class TransformModule:
        """A transform that is a ``lucid.nn.Module`` when lucid-nn is installed."""

        def forward(self, *args: Any, **kwargs: Any) -> Any: ...

else:
    try:
        from lucid.nn.module import Module as _Module
    except ImportError:  # lucid-data without lucid-nn
        _Module = None

    if _Module is None:

        class TransformModule:
            """A transform (a plain callable: lucid-nn is not installed)."""

            def forward(self, *args: Any, **kwargs: Any) -> Any:
                """The transform applied: the same as calling it."""
                return self(*args, **kwargs)

    else:

        class TransformModule(_Module):
            """A transform that is a ``lucid.nn.Module``, as torchvision's is a torch module."""

            def __new__(cls, *args: Any, **kwargs: Any) -> Any:
                # Module's state before the transform's own __init__ (which does not call
                # Module.__init__), so that its attributes go through Module.__setattr__.
                self = super().__new__(cls)
                _Module.__init__(self)
                return self

            def forward(self, *args: Any, **kwargs: Any) -> Any:
                """The transform applied: the same as calling it."""
                return self(*args, **kwargs)
