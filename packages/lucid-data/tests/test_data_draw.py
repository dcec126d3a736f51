"""lucid.data.utils' drawings: boxes, masks, keypoints and flow images, as torchvision's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data.utils import (
    draw_bounding_boxes,
    draw_keypoints,
    draw_segmentation_masks,
    flow_to_image,
)

pytest.importorskip("PIL.Image")


def _black(height: int = 10, width: int = 12) -> lucid.Tensor:
    return lucid.from_numpy(np.zeros((3, height, width), np.uint8))


def test_draw_bounding_boxes_outlines_in_the_given_color() -> None:
    boxes = lucid.tensor([[2.0, 3.0, 8.0, 7.0]])
    out = draw_bounding_boxes(_black(), boxes, colors="red").numpy()
    assert out.dtype == np.uint8 and out.shape == (3, 10, 12)
    np.testing.assert_array_equal(out[:, 3, 2], [255, 0, 0])  # a corner of the outline
    np.testing.assert_array_equal(out[:, 7, 8], [255, 0, 0])
    np.testing.assert_array_equal(out[:, 5, 5], [0, 0, 0])  # inside stays unfilled
    np.testing.assert_array_equal(out[:, 0, 0], [0, 0, 0])


def test_draw_bounding_boxes_fill_label_gray_and_float() -> None:
    boxes = lucid.tensor([[1.0, 1.0, 9.0, 8.0]])
    filled = draw_bounding_boxes(_black(), boxes, colors=(0, 255, 0), fill=True).numpy()
    assert filled[1, 4, 4] > 0 and filled[0, 4, 4] == 0  # translucent green inside
    gray = lucid.from_numpy(np.zeros((1, 20, 30), np.uint8))
    labelled = draw_bounding_boxes(gray, lucid.tensor([[0.0, 0.0, 29.0, 19.0]]), labels=["a"])
    assert tuple(labelled.shape) == (3, 20, 30)
    as_float = draw_bounding_boxes(lucid.zeros(3, 10, 12), boxes, colors="white")
    assert as_float.dtype == lucid.float32
    np.testing.assert_allclose(as_float.numpy()[:, 1, 1], 1.0, rtol=0, atol=1e-6)


def test_draw_bounding_boxes_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="xmin, ymin, xmax, ymax"):
        draw_bounding_boxes(_black(), lucid.tensor([[5.0, 0.0, 1.0, 3.0]]))
    with pytest.raises(ValueError, match="labels"):
        draw_bounding_boxes(_black(), lucid.tensor([[0.0, 0.0, 1.0, 1.0]]), labels=["a", "b"])
    with pytest.raises(ValueError, match="not batches"):
        draw_bounding_boxes(lucid.zeros(1, 3, 4, 4), lucid.tensor([[0.0, 0.0, 1.0, 1.0]]))
    with pytest.warns(UserWarning, match="No box"):
        draw_bounding_boxes(_black(), lucid.zeros(0, 4))


def test_draw_segmentation_masks_blends_and_blacks_out_overlaps() -> None:
    image = lucid.from_numpy(np.full((3, 4, 4), 100, np.uint8))
    masks = np.zeros((2, 4, 4), bool)
    masks[0, :2] = True
    masks[1, 1:3] = True
    out = draw_segmentation_masks(
        image, lucid.from_numpy(masks), alpha=0.5, colors=["red", (0, 0, 200)]
    ).numpy()
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out[:, 0, 0], [177, 50, 50])  # 100 * .5 + red * .5
    np.testing.assert_array_equal(out[:, 1, 0], [50, 50, 50])  # overlap: black * .5
    np.testing.assert_array_equal(out[:, 2, 0], [50, 50, 150])
    np.testing.assert_array_equal(out[:, 3, 0], [100, 100, 100])
    with pytest.raises(ValueError, match="dtype bool"):
        draw_segmentation_masks(image, lucid.zeros(4, 4))


def test_draw_keypoints_discs_lines_and_visibility() -> None:
    kpts = lucid.tensor([[[2.0, 2.0], [9.0, 2.0], [5.0, 8.0]]])
    vis = lucid.tensor([[True, True, False]])
    out = draw_keypoints(
        _black(),
        kpts,
        connectivity=[(0, 1), (1, 2)],
        colors="blue",
        radius=1,
        width=1,
        visibility=vis,
    ).numpy()
    np.testing.assert_array_equal(out[:, 1, 2], [0, 0, 255])  # the disc (the line is white)
    assert out[:, 2, 5].sum() > 0  # the line between the two visible points
    assert out[:, 8, 5].sum() == 0  # the invisible point is not drawn
    with pytest.raises(ValueError, match="num_instances, K, 2"):
        draw_keypoints(_black(), lucid.zeros(3, 2))


def test_flow_to_image_color_wheel() -> None:
    flow = np.zeros((2, 2, 3), np.float32)
    flow[0, 0, 0] = 1.0  # rightwards: torchvision's wheel gives red
    flow[1, 1, 1] = 0.5  # half-length downwards
    img = flow_to_image(lucid.from_numpy(flow)).numpy()
    assert img.dtype == np.uint8 and img.shape == (3, 2, 3)
    np.testing.assert_array_equal(img[:, 0, 0], [255, 0, 0])
    np.testing.assert_array_equal(img[:, 0, 2], [255, 255, 255])  # zero flow is white
    batch = flow_to_image(lucid.from_numpy(np.stack([flow, flow])))
    assert tuple(batch.shape) == (2, 3, 2, 3)
    with pytest.raises(ValueError, match="float32"):
        flow_to_image(lucid.from_numpy(flow.astype(np.float64)))
