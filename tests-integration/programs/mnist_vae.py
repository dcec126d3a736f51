"""A variational autoencoder on MNIST digits, written as a PyTorch user writes one.

python mnist_vae.py --data-root ROOT --out-dir results
"""

import argparse
import os

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from torchvision import datasets, transforms
from torchvision.utils import save_image


class VAE(nn.Module):
    def __init__(self, hidden=128, latent=8):
        super().__init__()
        self.fc1 = nn.Linear(784, hidden)
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, 784)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        if not self.training:
            return mu
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def train(model, device, loader, optimizer, steps):
    model.train()
    losses = []
    for data, _ in loader:
        data = data.to(device)
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        loss = loss_function(recon, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / len(data))
        if len(losses) == steps:
            break
    return losses


def evaluate(model, device, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for data, _ in loader:
            data = data.to(device)
            recon, mu, logvar = model(data)
            total += loss_function(recon, data, mu, logvar).item()
    return total / len(loader.dataset)


def main(argv=None):
    parser = argparse.ArgumentParser(description="VAE MNIST")
    parser.add_argument("--data-root", default="../data")
    parser.add_argument("--out-dir", default="results")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--init-from", help="a .npz of initial weights")
    parser.add_argument("--save-init", help="where to save the initial weights (.npz)")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    kwargs = {"num_workers": 1, "pin_memory": True} if device.type == "cuda" else {}
    train_set = datasets.MNIST(args.data_root, train=True, transform=transforms.ToTensor())
    test_set = datasets.MNIST(args.data_root, train=False, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(
        train_set, batch_size=args.batch_size, shuffle=True, **kwargs
    )
    test_subset = torch.utils.data.Subset(test_set, range(512))
    test_loader = torch.utils.data.DataLoader(test_subset, batch_size=256, **kwargs)

    model = VAE().to(device)
    if args.init_from:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(args.init_from).items()})
    if args.save_init:
        state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(args.save_init, **state)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)

    before = evaluate(model, device, test_loader)
    losses = train(model, device, train_loader, optimizer, args.steps)
    after = evaluate(model, device, test_loader)
    print(f"test loss {before:.2f} -> {after:.2f}")

    os.makedirs(args.out_dir, exist_ok=True)
    with torch.no_grad():
        data, _ = next(iter(test_loader))
        recon, _, _ = model(data.to(device))
        comparison = torch.cat([data[:8], recon.view(-1, 1, 28, 28)[:8]])
        save_image(comparison.cpu(), os.path.join(args.out_dir, "reconstruction.png"), nrow=8)
        sample = model.decode(torch.randn(16, 8).to(device)).cpu()
        save_image(sample.view(16, 1, 28, 28), os.path.join(args.out_dir, "sample.png"))
    return {"losses": losses, "eval_before": before, "eval_after": after, "model": model}


if __name__ == "__main__":
    main()
