"""Write lucid.models' weights enums (``_tv_weights.py``) from torchvision's own source.

torchvision 0.28's ``*_Weights`` enums (url, evaluation transforms, meta: categories,
``num_params``, recipe, ``_metrics``, ``_docs`` ...) are read by importing torchvision's
pure-Python model code (its compiled ops stubbed, as the tests do) and written out as Python
source: one enum per builder that lucid.models registers, with the builder it belongs to. Run
it in the parity env after adding a torchvision family:

    /work/bin/wtpy parity tools/gen_tv_weights.py \
        --torchvision ~/.cache/lucid-models-tests/torchvision-0.28.0

``--check`` exits 1 when the committed file differs from what would be written.
"""

from __future__ import annotations

import argparse
import enum
import functools
import importlib
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packages" / "lucid-models" / "src" / "lucid" / "models" / "_tv_weights.py"
CATEGORY_LISTS = (
    "_IMAGENET_CATEGORIES",
    "_COCO_CATEGORIES",
    "_COCO_PERSON_CATEGORIES",
    "_COCO_PERSON_KEYPOINT_NAMES",
    "_VOC_CATEGORIES",
    "_KINETICS400_CATEGORIES",
)
# torchvision's sub-packages, in the order their enums are written (quantization last: its
# enums name the float ones in meta["unquantized"])
SUBPACKAGES = ("", "detection", "segmentation", "video", "optical_flow", "quantization")


def _torchvision(src: str) -> Any:
    sys.path.append(src)
    stub = "torchvision._meta_registrations"
    sys.modules.setdefault(stub, types.ModuleType(stub))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tvm = importlib.import_module("torchvision.models")
        for sub in SUBPACKAGES[1:]:
            importlib.import_module(f"torchvision.models.{sub}")
    return tvm


def _lucid_builders() -> set[str]:
    for pkg in ("lucid-core", "lucid-nn", "lucid-data", "lucid-models"):
        sys.path.insert(0, str(ROOT / "packages" / pkg / "src"))
    # the registry without the file this writes (it may be stale or broken)
    stub = types.ModuleType("lucid.models._tv_weights")
    stub.__all__ = []  # type: ignore[attr-defined]
    stub.__getattr__ = lambda name: type(name, (), {})  # type: ignore[method-assign]
    sys.modules["lucid.models._tv_weights"] = stub
    import lucid.models

    return set(lucid.models.list_models())


class _Emitter:
    def __init__(self, meta_module: Any) -> None:
        self.lists = {name: getattr(meta_module, name) for name in CATEGORY_LISTS}
        self.used: set[str] = set()
        self.presets: set[str] = set()

    def value(self, v: Any) -> str:
        if isinstance(v, list):
            for name, lst in self.lists.items():
                if v == lst:
                    self.used.add(name)
                    return name
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {self.value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, tuple):
            inner = ", ".join(self.value(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, enum.Enum):
            return f"{type(v).__name__}.{v.name}"
        if isinstance(v, float) and v != v:
            return 'float("nan")'
        if isinstance(v, str | int | float | bool) or v is None:
            return repr(v)
        raise TypeError(f"cannot write {v!r} ({type(v).__name__})")

    def transforms(self, t: Any) -> str:
        if isinstance(t, functools.partial):
            self.presets.add(t.func.__name__)
            kw = ", ".join(f"{k}={self.value(v)}" for k, v in t.keywords.items())
            return f"partial({t.func.__name__}, {kw})"
        self.presets.add(t.__name__)
        return str(t.__name__)


def generate(src: str) -> str:
    tvm = _torchvision(src)
    from torchvision.models import _api, _meta

    ours = _lucid_builders()
    em = _Emitter(_meta)
    classes: list[str] = []
    registrations: list[str] = []
    exports: dict[str, list[str]] = {}
    done: set[str] = set()
    for sub in SUBPACKAGES:
        module = tvm if not sub else getattr(tvm, sub)
        for builder in _api.list_models(module=module):
            name = builder
            if name not in ours:
                continue
            weights = _api.get_model_weights(_api.get_model_builder(builder))
            registrations.append(f"register_weights({name!r}, {weights.__name__})")
            if weights.__name__ in done:
                continue
            done.add(weights.__name__)
            exports.setdefault(sub, []).append(weights.__name__)
            lines = [f"class {weights.__name__}(WeightsEnum):",
                     f'    """torchvision\'s ``{weights.__name__}`` (``{weights.__module__}``)."""',
                     ""]  # fmt: skip
            for key, member in weights.__members__.items():
                if key != member.name:  # an alias: DEFAULT
                    lines.append(f"    {key} = {member.name}")
                    continue
                w = member.value
                lines.append(f"    {key} = Weights(")
                lines.append(f"        url={w.url!r},")
                lines.append(f"        transforms={em.transforms(w.transforms)},")
                lines.append(f"        meta={em.value(w.meta)},")
                lines.append("    )")
            classes.append("\n".join(lines))
    header = [
        '"""torchvision 0.28\'s weights enums of the builders lucid.models has.',
        "",
        "Generated by tools/gen_tv_weights.py from torchvision's source: do not edit by hand.",
        '"""',
        "",
        "# ruff: noqa: E501",
        "from __future__ import annotations",
        "",
        "from functools import partial",
        "",
        "from lucid.data.transforms import InterpolationMode"
        if "InterpolationMode." in "\n".join(classes)
        else "",
        f"from lucid.data.transforms.presets import {', '.join(sorted(em.presets))}",
        "from lucid.models._api import Weights, WeightsEnum, register_weights",
    ]
    consts = [f"{name} = {em.lists[name]!r}" for name in CATEGORY_LISTS if name in em.used]
    groups = "\n".join(f"    {sub!r}: {sorted(names)!r}," for sub, names in exports.items())
    footer = [
        f"__all__ = {sorted(exports.get('', []))!r}",
        "",
        '# torchvision sub-package -> the enums it exports ("" is torchvision.models itself)',
        f"NAMESPACES: dict[str, list[str]] = {{\n{groups}\n}}",
        "",
        *registrations,
    ]
    text = "\n".join(header).rstrip() + "\n\n" + "\n".join(consts) + "\n\n\n"
    text += "\n\n\n".join(classes) + "\n\n\n" + "\n".join(footer) + "\n"
    return text


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--torchvision", required=True, help="folder holding torchvision/")
    p.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = p.parse_args()
    text = generate(args.torchvision)
    cmd = ["uvx", "ruff@0.17.6", "format", "--stdin-filename", str(OUT), "-"]
    fmt = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=ROOT, check=False)
    if fmt.returncode == 0:
        text = fmt.stdout
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(
            f"{OUT.name} is {'up to date' if same else 'out of date: run tools/gen_tv_weights.py'}"
        )
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count('(WeightsEnum)')} enums)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
