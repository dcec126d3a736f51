"""torchvision's ResNet-18 module tree rebuilt with torch alone (torchvision is not needed).

Its state_dict keys are torchvision's, so its weights load into ``lucid.models.resnet18`` /
``resnet18_cifar`` unchanged. The ResNet experiment imports it; the parity tests load this file
by path (the ``torch_resnet18`` fixture in the repository's ``conftest.py``), as ``tools/`` is
not a package.
"""

from __future__ import annotations

from typing import Any


def torch_resnet18(num_classes: int = 10, cifar: bool = True) -> Any:
    """ResNet-18 in torch.nn; ``cifar`` swaps the 7x7 stride-2 stem and max-pool for a 3x3 conv."""
    import torch
    from torch import nn

    class BasicBlock(nn.Module):  # type: ignore[misc]
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x: Any) -> Any:
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    class ResNet18(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            if cifar:
                self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
                self.maxpool = nn.Identity()
            else:
                self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
                self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
            for i, (cin, cout, stride) in enumerate(widths, 1):
                blocks = nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1))
                setattr(self, f"layer{i}", blocks)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet18()
