"""``lucid.autograd.profiler``: ``torch.autograd.profiler``'s ``profile`` (the older entry
point, with ``enabled``/``use_cuda`` flags) and ``record_function``, recording through
:mod:`lucid.profiler` (lucid records the CPU; ``use_cuda`` is accepted and records nothing
more, as there is no CUDA device).

>>> with lucid.autograd.profiler.profile() as prf:
...     (lucid.ones(2, 3) * 2).sum().item()
6.0
>>> print(prf.key_averages().table(sort_by="self_cpu_time_total"))  # doctest: +SKIP
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from lucid import profiler as _profiler
from lucid.profiler import EventList, FunctionEvent, record_function

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]


class profile(_profiler.profile):  # noqa: N801  (torch's name)
    """``torch.autograd.profiler.profile``: records the ops run inside ``with`` (nothing when
    ``enabled=False``); ``key_averages()``, ``table()``, ``export_chrome_trace()`` as
    :class:`lucid.profiler.profile`'s."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None,
                 post_processing_timeout_s: float | None = None,
                 activity_filters: Any = None) -> None:  # fmt: skip
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, acc_events=acc_events,
                         use_cuda=use_cuda or None)  # fmt: skip
        self.enabled = enabled

    def __enter__(self) -> profile:
        if self.enabled:
            super().__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        if self.enabled:
            super().__exit__(exc_type, exc, tb)

    @property
    def function_events(self) -> EventList:
        """The recorded events (torch's attribute name for :meth:`events`)."""
        return self.events()
