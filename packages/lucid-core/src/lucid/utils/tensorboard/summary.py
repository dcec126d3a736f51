"""Summary protocol buffers for TensorBoard (``torch.utils.tensorboard.summary``).

Each function returns a ``Summary`` proto that :class:`~lucid.utils.tensorboard.SummaryWriter`
wraps in an event. Values may be lucid tensors, numpy arrays or Python numbers.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
from tensorboard.plugins.hparams import metadata as hp_metadata
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from lucid._tensor import Tensor

__all__ = ["hparams", "histogram", "image", "make_np", "scalar", "text"]


def make_np(x: Any) -> np.ndarray:
    """``x`` (a Tensor, an array, a number or a list) as a numpy array."""
    if isinstance(x, Tensor):
        return np.asarray(x.detach().cpu().numpy())
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x) or isinstance(x, (list, tuple)):
        return np.asarray(x)
    raise NotImplementedError(
        f"Got {type(x).__name__}, but numpy array, lucid tensor, or python scalar are expected"
    )


def scalar(name: str, value: Any, new_style: bool = False,
           double_precision: bool = False) -> Any:  # fmt: skip
    """A summary of one number (``simple_value``, or a tensor with ``new_style``)."""
    arr = make_np(value).squeeze()
    if arr.ndim != 0:
        raise ValueError(f"scalar should be 0D, got an array of shape {arr.shape}")
    val = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=val)])
    proto = TensorProto(
        dtype="DT_DOUBLE" if double_precision else "DT_FLOAT",
        **({"double_val": [val]} if double_precision else {"float_val": [val]}),
    )
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Any:
    """A summary of the histogram of ``values`` (numpy's ``bins``: a count, edges or a rule)."""
    arr = make_np(values).astype(float).reshape(-1)
    if arr.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = default_bins()
    counts, limits = np.histogram(arr, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % step)).reshape(-1, step).sum(axis=-1)
        limits = np.concatenate([limits[:-1:step], limits[-1:]])
    # trim the empty buckets at both ends, keeping one empty bucket below (as torch)
    cum = np.cumsum(np.greater(counts, 0))
    start, end = (int(i) for i in np.searchsorted(cum, [0, cum[-1] - 1], side="right"))
    end += 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty (no value falls in the bins).")
    hist = HistogramProto(
        min=float(arr.min()), max=float(arr.max()), num=int(arr.size), sum=float(arr.sum()),
        sum_squares=float(arr.dot(arr)), bucket_limit=limits.tolist(), bucket=counts.tolist(),
    )  # fmt: skip
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def default_bins() -> list[float]:
    """TensorFlow's default bucket edges: 0 and +-1e-12 growing by 10% up to 1e20."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


def convert_to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in ``dataformats`` (``CHW``, ``HWC``, ``HW``, ``NCHW``...) as HWC."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or arr.ndim != len(fmt):
        raise ValueError(
            f"size of input tensor and input format are different: tensor shape {arr.shape}, "
            f"input_format {dataformats!r}"
        )
    if len(fmt) == 4:
        grid: np.ndarray = _grid(arr.transpose([fmt.find(c) for c in "NCHW"]))
        hwc4: np.ndarray = grid.transpose(1, 2, 0)
        return hwc4
    if len(fmt) == 3:
        hwc = arr.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([arr.transpose([fmt.find(c) for c in "HW"])] * 3, 2)
    raise ValueError(f"dataformats must have 2, 3 or 4 letters, got {dataformats!r}")


def _grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images in a grid of up to ``ncols`` columns (CHW), as torch's make_grid."""
    if nchw.shape[1] == 1:
        nchw = np.concatenate([nchw] * 3, 1)
    n, c, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = nchw[i]
    return canvas


def image(tag: str, tensor: Any, dataformats: str = "NCHW") -> Any:
    """A summary of one image: floats in [0, 1] or uint8 in [0, 255], PNG-encoded."""
    hwc = convert_to_hwc(make_np(tensor), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = pixels.shape
    img = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=_png(pixels))
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def _png(pixels: np.ndarray) -> bytes:
    """A PNG file of an HxWx{1,3,4} uint8 array (no Pillow needed)."""
    h, w, c = pixels.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * c)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))  # fmt: skip


def text(tag: str, text_string: str) -> Any:
    """A summary of a string, shown by TensorBoard's text plugin (tag ``<tag>/text_summary``)."""
    plugin = SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(
        value=[
            Summary.Value(
                tag=tag + "/text_summary", metadata=SummaryMetadata(plugin_data=plugin),
                tensor=proto,
            )
        ]
    )  # fmt: skip


def _hp_summary(tag: str, **content: Any) -> Any:
    data = plugin_data_pb2.HParamsPluginData(version=hp_metadata.PLUGIN_DATA_VERSION, **content)
    smd = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name=hp_metadata.PLUGIN_NAME, content=data.SerializeToString()
        )
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=smd)])


def hparams(
    hparam_dict: dict[str, Any],
    metric_dict: dict[str, Any],
    hparam_domain_discrete: dict[str, list[Any]] | None = None,
) -> tuple[Any, Any, Any]:
    """The experiment, session-start and session-end summaries of TensorBoard's hparams plugin."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    for k, dom in domains.items():
        if (
            k not in hparam_dict
            or not isinstance(dom, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in dom)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )
    infos = []
    ssi = plugin_data_pb2.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        if isinstance(v, (int, float)):  # (a bool too: torch logs it as a number)
            ssi.hparams[k].number_value, field, kind = v, "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            ssi.hparams[k].string_value, field, kind = v, "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or lucid.Tensor")
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domains[k]]
            )
        infos.append(
            api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(kind), domain_discrete=domain)
        )
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    exp = _hp_summary(
        hp_metadata.EXPERIMENT_TAG,
        experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics),
    )
    start = _hp_summary(hp_metadata.SESSION_START_INFO_TAG, session_start_info=ssi)
    end = _hp_summary(
        hp_metadata.SESSION_END_INFO_TAG,
        session_end_info=plugin_data_pb2.SessionEndInfo(
            status=api_pb2.Status.Value("STATUS_SUCCESS")
        ),
    )
    return exp, start, end
