"""Bit-for-bit check of lucid.optim between two source trees (not a pytest file).

``dump`` runs every optimizer and option case (``optim_cases.ALL_CASES``) for ``STEPS`` steps on
seeded parameters and gradients (float16/32/64; a vector, a matrix, a parameter above the
multi-tensor update's piece size, a non-contiguous gradient every other step) and saves every
parameter and state value to an ``.npz``; ``compare`` says which arrays differ in any bit.
Run ``dump`` with each tree's sources first on ``PYTHONPATH``, e.g. main's and a branch's::

    PYTHONPATH=$(ls -d /path/to/main/packages/*/src | paste -sd:) \\
        python packages/lucid-optim/tests/optim_bits.py dump /tmp/main.npz
    PYTHONPATH=$(ls -d packages/*/src | paste -sd:) \\
        python packages/lucid-optim/tests/optim_bits.py dump /tmp/new.npz --foreach false
    python packages/lucid-optim/tests/optim_bits.py compare /tmp/main.npz /tmp/new.npz

``--foreach`` passes ``foreach=`` where the optimizer takes it (trees before it existed
ignore it). ``compare`` exits 1 when any array differs.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from optim_cases import ALL_CASES as CASES

SHAPES = [(5,), (3, 4), (70001,), (300, 257)]
STEPS = 12


def dump(path: str, foreach: str) -> None:
    import lucid
    import lucid.optim as optim

    values: dict[str, np.ndarray] = {}
    for ci, (name, options) in enumerate(CASES):
        for dtype in ("float32", "float64", "float16"):
            rng = np.random.default_rng(1000 + ci)
            params = [
                lucid.tensor(rng.normal(size=s).astype(dtype), requires_grad=True) for s in SHAPES
            ]
            extra = {} if foreach == "unset" else {"foreach": foreach == "true"}
            try:
                opt = getattr(optim, name)(params, **options, **extra)
            except TypeError:  # this optimizer (or this tree) takes no foreach
                opt = getattr(optim, name)(params, **options)
            for step in range(STEPS):
                for i, p in enumerate(params):
                    g = rng.normal(size=p.shape).astype(dtype)
                    if i == 3 and step % 2:
                        g = np.ascontiguousarray(g.T).T
                    p.grad = lucid.tensor(g)
                opt.step()
            key = f"{ci}_{name}_{dtype}"
            for i, p in enumerate(params):
                values[f"{key}_p{i}"] = p.detach().numpy().copy()
                for k, v in opt.state[p].items():
                    is_tensor = isinstance(v, lucid.Tensor)
                    values[f"{key}_p{i}_{k}"] = v.numpy().copy() if is_tensor else np.asarray(v)
    np.savez(path, **values)  # type: ignore[arg-type]
    print(f"{len(values)} arrays -> {path}")


def compare(reference: str, others: list[str]) -> int:
    ref = np.load(reference)
    bad = 0
    for other in others:
        got = np.load(other)
        keys = set(ref.files) ^ set(got.files)
        diff = sorted(keys) + [
            k
            for k in ref.files
            if k in got.files
            and (ref[k].dtype != got[k].dtype or ref[k].tobytes() != got[k].tobytes())
        ]
        print(f"{other}: {len(ref.files)} arrays, {len(diff)} differ {diff[:10]}")
        bad += len(diff)
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("path")
    d.add_argument("--foreach", choices=("unset", "true", "false"), default="unset")
    c = sub.add_parser("compare")
    c.add_argument("reference")
    c.add_argument("others", nargs="+")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.path, args.foreach)
    else:
        sys.exit(compare(args.reference, args.others))


if __name__ == "__main__":
    main()
