"""A small CNN classifier on MNIST, written as a PyTorch user writes one.

python mnist_cnn.py --data-root ROOT      # ROOT/MNIST/raw holds the four IDX files
"""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self, dropout=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(dropout)
        self.fc1 = nn.Linear(16 * 5 * 5, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, device, loader, optimizer, steps):
    model.train()
    losses = []
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if len(losses) == steps:
            break
    return losses


def evaluate(model, device, loader):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            total += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return total / len(loader.dataset), correct / len(loader.dataset)


def load_numpy_state(model, path):
    state = {k: torch.from_numpy(v) for k, v in np.load(path).items()}
    model.load_state_dict(state)


def save_numpy_state(model, path):
    np.savez(path, **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})


def main(argv=None):
    parser = argparse.ArgumentParser(description="MNIST CNN")
    parser.add_argument("--data-root", default="../data")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-shuffle", action="store_true")
    parser.add_argument("--init-from", help="a .npz of initial weights")
    parser.add_argument("--save-init", help="where to save the initial weights (.npz)")
    parser.add_argument("--save-model", help="where to save the trained state_dict")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
    )
    train_set = datasets.MNIST(args.data_root, train=True, download=False, transform=transform)
    test_set = datasets.MNIST(args.data_root, train=False, transform=transform)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=not args.no_shuffle)
    test_loader = DataLoader(Subset(test_set, range(500)), batch_size=250)

    model = Net(args.dropout).to(device)
    if args.init_from:
        load_numpy_state(model, args.init_from)
    if args.save_init:
        save_numpy_state(model, args.save_init)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)

    before, _ = evaluate(model, device, test_loader)
    losses = train(model, device, train_loader, optimizer, args.steps)
    scheduler.step()
    after, accuracy = evaluate(model, device, test_loader)
    print(f"test loss {before:.4f} -> {after:.4f}, accuracy {accuracy:.3f}")
    if args.save_model:
        torch.save(model.state_dict(), args.save_model)
    return {"losses": losses, "eval_before": before, "eval_after": after, "model": model}


if __name__ == "__main__":
    main()
