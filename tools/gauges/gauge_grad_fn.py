"""Gauge: ``grad_fn.name()`` of torch's and lucid's outputs over torch's OpInfo samples.

For every op_db entry lucid has, the first float32 samples (requires_grad) run through torch
and lucid; the first output that carries a ``grad_fn`` in torch is compared by name (torch's
``MulBackward0`` against lucid's). Prints the tally and the differing name pairs, most
frequent first. Run in the parity environment:

    python tools/gauges/gauge_grad_fn.py [--samples 2] [pattern ...]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gauge_bridge as bridge  # noqa: E402
import torch  # noqa: E402
from gauge_bridge import GaugeTimeout, ToLucid, time_limit  # noqa: E402
from gauge_opinfo import excluded_reason, lucid_caller, select  # noqa: E402

import lucid  # noqa: E402


def _first_node(out: Any, cls: type) -> Any:
    for leaf in bridge.tensor_leaves(out, cls):
        if getattr(leaf, "grad_fn", None) is not None:
            return leaf.grad_fn
    return None


def gauge(patterns: list[str], samples: int) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """The tally (same / differ / no node in lucid / error) and the differing pairs."""
    from torch.testing._internal.common_methods_invocations import op_db

    tally: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for op in select(op_db, patterns or None):
        if excluded_reason(op) or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        if not op.supports_autograd:
            continue
        caller = lucid_caller(op)
        if caller.missing():
            continue
        try:
            items = list(op.sample_inputs("cpu", torch.float32, requires_grad=True))[:samples]
        except Exception:
            continue
        for sample in items:
            try:
                l_in, l_args, l_kwargs = ToLucid()((sample.input, sample.args, sample.kwargs))
                with time_limit(10.0):
                    t_node = _first_node(op(sample.input, *sample.args, **sample.kwargs),
                                         torch.Tensor)  # fmt: skip
                    if t_node is None:
                        continue
                    l_node = _first_node(caller(l_in, l_args, l_kwargs), lucid.Tensor)
            except (Exception, GaugeTimeout):
                tally["error"] += 1
                continue
            if l_node is None:
                tally["no node in lucid"] += 1
                pairs[(t_node.name(), "-")] += 1
            elif l_node.name() == t_node.name():
                tally["same"] += 1
            else:
                tally["differ"] += 1
                pairs[(t_node.name(), l_node.name())] += 1
    return tally, pairs


def main(argv: list[str] | None = None) -> int:
    """Print the gauge's tally and its differing pairs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("patterns", nargs="*", help="fnmatch patterns of op_db names")
    parser.add_argument("--samples", type=int, default=2, help="samples per op (default 2)")
    parser.add_argument("--top", type=int, default=60, help="differing pairs shown")
    args = parser.parse_args(argv)
    bridge.stub_expecttest()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    tally, pairs = gauge(args.patterns, args.samples)
    total = sum(tally.values())
    print(f"grad_fn names over {total} samples: " + ", ".join(f"{k} {v}" for k, v in
                                                                tally.most_common()))  # fmt: skip
    for (t, lu), n in pairs.most_common(args.top):
        print(f"{n:5d}  torch {t:32s} lucid {lu}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
