"""``torch.nn.modules.module``'s path: ``Module`` lives in ``lucid.nn.module``."""

from lucid.nn.module import Module as Module
from lucid.nn.module import register_module_forward_hook as register_module_forward_hook
from lucid.nn.module import register_module_forward_pre_hook as register_module_forward_pre_hook

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook"]
