"""Optical flow models (``torchvision.models.optical_flow``): RAFT large and small, with
torchvision's layout, builders and weights enums."""

from __future__ import annotations

from lucid.models._tv_weights import Raft_Large_Weights, Raft_Small_Weights
from lucid.models.optical_flow.raft import RAFT, raft_large, raft_small

__all__ = ["RAFT", "Raft_Large_Weights", "Raft_Small_Weights", "raft_large", "raft_small"]
