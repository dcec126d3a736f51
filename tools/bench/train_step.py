"""Benchmark: whole training steps, lucid vs PyTorch, from the same weights on the same batch.

One step is forward + cross-entropy + backward + SGD (lr 0.01, momentum 0.9), in train mode:
LeNet-5 at batch 64 and ResNet-18-CIFAR at batch 128 (``--batch-resnet``). torch's models start
from lucid's ``state_dict`` (copied through NumPy). Each configuration runs in a fresh
subprocess: both frameworks at their defaults (no ``set_num_threads`` call) and at 1 thread
each, with the environment as given and with ``OPENBLAS_CORETYPE`` / ``OPENBLAS_L2_SIZE``
removed. Timing alternates lucid and torch rounds (a round is 20 LeNet steps or 1 ResNet step;
the order turns each round: lucid first, then torch first) and prints medians per step and
lucid/torch (and, in a ``(fastest)`` row, each framework's fastest round: steadier on a VM whose
speed jumps; in a ``(per round)`` row, the median of each round's lucid/torch, the two timed
seconds apart); each round starts after a 0.3 s pause, so that neither framework's idle
spinning threads take a core from the other's round. Peak memory is
VmHWM of two more fresh subprocesses per configuration, one per framework, so neither counts
the other's. Without torch only the lucid column is printed.

    python tools/bench/train_step.py                      # both models, all configurations
    python tools/bench/train_step.py --models lenet5 --rounds 11
    python tools/bench/train_step.py --quick              # smoke run: LeNet, 3 rounds, env as given
    python tools/bench/train_step.py --apart              # + each framework in its own process
    python tools/bench/train_step.py --paired             # + own processes, rounds interleaved
    python tools/bench/train_step.py --compile --models lenet5,gpt   # lucid.compile, torch.compile
    LUCID_NUMBA=0 python tools/bench/train_step.py        # without lucid-core[numba] kernels
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

OB_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
TORCH_RESNET = Path(__file__).resolve().parents[1] / "experiments" / "torch_resnet.py"
STEPS_PER_ROUND = {"lenet5": 20, "resnet18": 1, "gpt": 5, "lstm": 3, "charrnn": 20, "gptgen": 1}
# Rounds by cost: a short round is one sample of a VM whose speed moves in spells of a second
# or so (char-RNN rounds of 20 steps took lucid 0.85 or 1.6 ms a step, torch 0.7 or 1.2, minutes
# apart and in neighbouring rounds); the cheap rows take more, so that their medians hold
# (docs/performance.md, session 24).
DEFAULT_ROUNDS = {"lenet5": 11, "resnet18": 3, "gpt": 7, "lstm": 7, "charrnn": 15, "gptgen": 7}
SEQ_MODELS = ("gpt", "lstm", "charrnn", "gptgen")
# gptgen: nanoGPT's sample.py on the gpt workload's model (a "step" generates this many tokens
# from one, without grad; temperature 0.8, top_k 200); the row adds tokens per second.
GEN_TOKENS = 500
# Pause before each round: OpenBLAS's idle threads spin for ~0.1 s after their last call (and
# OpenMP's for a while), and in one process those of the framework timed last would take a
# core from the one timed next (torch's LeNet-5 rounds measured 6.0 -> 10-11 ms after lucid's).
SETTLE_S = 0.3


def _torch_model(torch: Any, name: str) -> Any:
    """torch twins of lucid's models, with lucid's state_dict keys."""
    nn = torch.nn
    if name == "resnet18":
        spec = importlib.util.spec_from_file_location("torch_resnet", TORCH_RESNET)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod.torch_resnet18(num_classes=10, cifar=True)

    class LeNet5(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            )  # fmt: skip
            self.classifier = nn.Sequential(
                nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                nn.Linear(84, 10),
            )  # fmt: skip

        def forward(self, x: Any) -> Any:
            return self.classifier(self.features(x))

    return LeNet5()


# -- transformer and recurrent workloads: one model code for both frameworks (same API) --------
GPT = {"vocab": 65, "block": 64, "layers": 4, "heads": 4, "embd": 128, "batch": 12}
LSTM = {"vocab": 10_000, "emb": 200, "hidden": 200, "layers": 2, "bptt": 35, "batch": 20,
        "dropout": 0.2, "lr": 20.0, "clip": 0.25}  # fmt: skip
CHARRNN = {"letters": 57, "hidden": 128, "categories": 18, "length": 10, "lr": 0.005}


def _gpt(nn: Any, F: Any) -> Any:
    """nanoGPT's model (bias=False, dropout 0, tied embeddings) in ``nn``/``F``'s framework."""
    c = GPT

    class Block(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            e = c["embd"]
            self.ln_1 = nn.LayerNorm(e, bias=False)
            self.c_attn = nn.Linear(e, 3 * e, bias=False)
            self.attn_proj = nn.Linear(e, e, bias=False)
            self.ln_2 = nn.LayerNorm(e, bias=False)
            self.c_fc = nn.Linear(e, 4 * e, bias=False)
            self.gelu = nn.GELU()
            self.mlp_proj = nn.Linear(4 * e, e, bias=False)

        def forward(self, x: Any) -> Any:
            b, t, e = x.shape
            h = c["heads"]
            q, k, v = self.c_attn(self.ln_1(x)).split(e, dim=2)
            q, k, v = (z.view(b, t, h, e // h).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, e))
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))

    class GPTModel(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(c["vocab"], c["embd"])
            self.wpe = nn.Embedding(c["block"], c["embd"])
            self.h = nn.ModuleList([Block() for _ in range(c["layers"])])
            self.ln_f = nn.LayerNorm(c["embd"], bias=False)
            self.lm_head = nn.Linear(c["embd"], c["vocab"], bias=False)
            self.wte.weight = self.lm_head.weight  # tied, as nanoGPT

        def forward(self, idx: Any, pos: Any, targets: Any = None) -> Any:
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            if targets is None:  # nanoGPT's inference path: the last position's logits only
                return self.lm_head(self.ln_f(x[:, [-1], :]))
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPTModel()


def _lstm(nn: Any, F: Any) -> Any:
    """pytorch/examples word_language_model's RNNModel (LSTM) in ``nn``'s framework."""
    c = LSTM

    class RNNModel(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(c["dropout"])
            self.encoder = nn.Embedding(c["vocab"], c["emb"])
            self.rnn = nn.LSTM(c["emb"], c["hidden"], c["layers"], dropout=c["dropout"])
            self.decoder = nn.Linear(c["hidden"], c["vocab"])

        def forward(self, x: Any, hidden: Any) -> Any:
            emb = self.drop(self.encoder(x))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, c["vocab"])
            return F.log_softmax(decoded, dim=1), hidden

    return RNNModel()


def _charrnn(nn: Any, F: Any, cat: Any) -> Any:
    """pytorch/tutorials' char-RNN name classifier (a Linear per character, batch 1)."""
    c = CHARRNN

    class CharRNN(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            n = c["letters"] + c["hidden"]
            self.i2h = nn.Linear(n, c["hidden"])
            self.i2o = nn.Linear(n, c["categories"])
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, x: Any, hidden: Any) -> Any:
            combined = cat((x, hidden), 1)
            return self.softmax(self.i2o(combined)), self.i2h(combined)

    return CharRNN()


def _seq_data(name: str) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    if name in ("gpt", "gptgen"):
        idx = rng.integers(0, GPT["vocab"], (GPT["batch"], GPT["block"] + 1)).astype(np.int64)
        return {"x": idx[:, :-1].copy(), "y": idx[:, 1:].copy(),
                "pos": np.arange(GPT["block"], dtype=np.int64)}  # fmt: skip
    if name == "lstm":
        ids = rng.integers(0, LSTM["vocab"], (LSTM["bptt"] + 1, LSTM["batch"])).astype(np.int64)
        return {"x": ids[:-1].copy(), "y": ids[1:].reshape(-1).copy()}
    eye = np.eye(CHARRNN["letters"], dtype=np.float32)
    letters = rng.integers(0, CHARRNN["letters"], CHARRNN["length"])
    return {"x": eye[letters][:, None, :].copy(),
            "y": rng.integers(0, CHARRNN["categories"], (1,)).astype(np.int64)}  # fmt: skip


def _seq_stepper(fw: Any, name: str, data: dict[str, Any], weights: Any,
                 compiled: bool = False) -> Any:  # fmt: skip
    """``(step, weights)`` for ``fw`` (lucid or torch): one training step as the recipe's
    (the model called through ``fw.compile`` where ``compiled``)."""
    nn, F = fw.nn, fw.nn.functional
    fw.manual_seed(0)
    t = {k: fw.from_numpy(v) for k, v in data.items()}
    build = {"gpt": lambda: _gpt(nn, F), "gptgen": lambda: _gpt(nn, F),
             "lstm": lambda: _lstm(nn, F),
             "charrnn": lambda: _charrnn(nn, F, fw.cat)}[name]  # fmt: skip
    model = build()
    if weights is not None:
        model.load_state_dict({k: fw.from_numpy(v.copy()) for k, v in weights.items()})
    weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    params = list(model.parameters())
    run = fw.compile(model) if compiled else model
    model.eval()  # the first step without dropout: the two frameworks' losses compare
    first = [True]

    def mode() -> None:
        if first:
            first.clear()
            model.train()

    clip = fw.nn.utils.clip_grad_norm_
    if name == "gptgen":
        pos = fw.arange(GPT["block"])
        start = t["x"][:1, :1]

        def step() -> float:  # nanoGPT's GPT.generate, as sample.py calls it
            fw.manual_seed(0)
            idx = start
            with fw.no_grad():
                for _ in range(GEN_TOKENS):
                    cond = idx if idx.size(1) <= GPT["block"] else idx[:, -GPT["block"] :]
                    logits = model(cond, pos[: cond.size(1)])[:, -1, :] / 0.8
                    v, _ = fw.topk(logits, min(200, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("inf")
                    probs = F.softmax(logits, dim=-1)
                    idx = fw.cat((idx, fw.multinomial(probs, num_samples=1)), dim=1)
                check = model(t["x"][:1], pos).sum()  # not the samples: the RNGs differ
            return float(check.item())

        return step, weights
    if name == "gpt":
        # nanoGPT's configure_optimizers: weight decay on the 2-D parameters only
        decay = [p for p in params if p.dim() >= 2]
        rest = [p for p in params if p.dim() < 2]
        opt = fw.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": rest, "weight_decay": 0.0}],
                             lr=1e-3, betas=(0.9, 0.99))  # fmt: skip

        def step() -> float:
            loss = run(t["x"], t["pos"], t["y"])
            loss.backward()
            clip(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            mode()
            return float(loss.item())

        return step, weights
    if name == "lstm":
        c = LSTM
        zeros = fw.zeros(c["layers"], c["batch"], c["hidden"])
        hidden = [(zeros, zeros)]

        def step() -> float:  # word_language_model's train(): repackage, clip, p.data.add_
            h = tuple(z.detach() for z in hidden[0])
            model.zero_grad()
            output, h = run(t["x"], h)
            loss = F.nll_loss(output, t["y"])
            loss.backward()
            clip(params, c["clip"])
            with fw.no_grad():
                for p in params:
                    p.add_(p.grad, alpha=-c["lr"])
            hidden[0] = h
            mode()
            return float(loss.item())

        return step, weights
    c = CHARRNN

    def step() -> float:  # the tutorial's train(): hidden from zeros, a Linear per letter
        hidden = fw.zeros(1, c["hidden"])
        model.zero_grad()
        for i in range(t["x"].shape[0]):
            output, hidden = run(t["x"][i], hidden)
        loss = F.nll_loss(output, t["y"])
        loss.backward()
        with fw.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-c["lr"])
        mode()
        return float(loss.item())

    return step, weights


def _mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _steppers(name: str, batch: int, frameworks: list[str]) -> dict[str, Any]:
    """One ``step() -> loss`` per framework, same weights, same batch; a name ending in
    ``.compile`` (``lucid.compile``, ``torch.compile``) calls the model through it."""
    if name in SEQ_MODELS:
        data = _seq_data(name)
        out: dict[str, Any] = {}
        weights = None
        for fw in frameworks:
            base = fw.removesuffix(".compile")
            out[fw], weights = _seq_stepper(__import__(base), name, data, weights, fw != base)
        return out
    rng = np.random.default_rng(0)
    shape = (1, 28, 28) if name == "lenet5" else (3, 32, 32)
    xs = rng.standard_normal((batch, *shape)).astype(np.float32)
    ys = rng.integers(0, 10, batch).astype(np.int64)
    out: dict[str, Any] = {}
    weights = None
    for fw in [f for f in frameworks if f.startswith("lucid")]:
        import lucid
        import lucid.nn.functional as F
        from lucid import optim
        from lucid.models import create_model

        lucid.manual_seed(0)
        lm = create_model("lenet5" if name == "lenet5" else "resnet18_cifar")
        lm.train()
        weights = {k: v.numpy().copy() for k, v in lm.state_dict().items()}
        lopt = optim.SGD(lm.parameters(), lr=0.01, momentum=0.9)
        lx, ly = lucid.from_numpy(xs), lucid.from_numpy(ys)
        lrun = lucid.compile(lm) if fw.endswith(".compile") else lm

        def lucid_step(lrun: Any = lrun, lopt: Any = lopt) -> float:
            loss = F.cross_entropy(lrun(lx), ly)
            lopt.zero_grad()
            loss.backward()
            lopt.step()
            return float(loss.item())

        out[fw] = lucid_step
    for fw in [f for f in frameworks if f.startswith("torch")]:
        import torch

        torch.manual_seed(0)
        tm = _torch_model(torch, name)
        if weights is not None:
            tm.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
        tm.train()
        topt = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
        tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)
        trun = torch.compile(tm) if fw.endswith(".compile") else tm

        def torch_step(trun: Any = trun, topt: Any = topt) -> float:
            loss = torch.nn.functional.cross_entropy(trun(tx), ty)
            topt.zero_grad()
            loss.backward()
            topt.step()
            return float(loss.item())

        out[fw] = torch_step
    return out


def worker(name: str, mode: str, threads: str, rounds: int, batch: int) -> dict[str, Any]:
    """In a fresh process: ``mode`` "time" (both, interleaved) or one framework's peak memory."""
    if mode.startswith("time:"):  # one framework timed in a process of its own (--apart)
        mode, frameworks = "time", [mode[5:]]
    elif mode == "compile":  # eager and compiled, both frameworks, interleaved (--compile)
        mode, frameworks = "time", ["lucid", "lucid.compile", "torch", "torch.compile"]
    else:
        frameworks = ["lucid", "torch"] if mode == "time" else [mode]
    if importlib.util.find_spec("torch") is None:
        frameworks = [f for f in frameworks if not f.startswith("torch")]
    if not frameworks:
        return {}
    res: dict[str, Any] = {}
    for fw in frameworks:
        mod = __import__(fw.removesuffix(".compile"))
        if threads == "1":
            mod.set_num_threads(1)
        res[f"{fw}_threads"] = mod.get_num_threads()
    steps = _steppers(name, batch, frameworks)
    k = STEPS_PER_ROUND[name]
    res["loss0"], res["first"] = {}, {}
    for fw, f in steps.items():  # first step, same weights: same loss (compiled: the capture)
        t0 = time.perf_counter()
        res["loss0"][fw] = f()
        res["first"][fw] = time.perf_counter() - t0
    for f in steps.values():
        for _ in range(k if mode == "time" else 2):  # warm up (and, for memory, reach the peak)
            f()
    if mode != "time":
        return {**res, "peak": _mib("VmHWM")}
    times: dict[str, list[float]] = {fw: [] for fw in steps}
    cpu: dict[str, list[float]] = {fw: [] for fw in steps}
    order = list(steps.items())
    for r in range(rounds):
        # the order turns each round (lucid, torch; torch, lucid; ...): neither framework is
        # always the one timed first after the other's round
        for fw, f in order if r % 2 == 0 else order[::-1]:
            time.sleep(SETTLE_S)  # the other framework's BLAS/OpenMP threads stop spinning
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(k):
                f()
            times[fw].append((time.perf_counter() - t0) / k)
            cpu[fw].append((time.process_time() - c0) / k)
    # each round's lucid/torch ratio (the two ran seconds apart, on the same machine state):
    # their median cancels the VM's slow and fast spells that the medians of each column keep
    pair = [(a / b) for a, b in zip(times.get("lucid", []), times.get("torch", [])) if b > 0]
    return {**res, "median": {fw: statistics.median(t) for fw, t in times.items()},
            "fastest": {fw: min(t) for fw, t in times.items()},
            "round_ratio": statistics.median(pair) if pair else None,
            "cpu": {fw: statistics.median(t) for fw, t in cpu.items()}}  # fmt: skip


def serve(name: str, fw: str, threads: str, batch: int) -> None:
    """A ``--paired`` worker: one framework in this process; times ``STEPS_PER_ROUND`` steps
    each time the coordinator writes a line, and answers with one JSON line."""
    mod = __import__(fw)
    if threads == "1":
        mod.set_num_threads(1)
    step = _steppers(name, batch, [fw])[fw]
    k = STEPS_PER_ROUND[name]
    loss0 = step()
    for _ in range(k):  # warm up
        step()
    print(json.dumps({"threads": mod.get_num_threads(), "loss0": loss0}), flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(k):
            step()
        t, c = (time.perf_counter() - t0) / k, (time.process_time() - c0) / k
        print(json.dumps({"t": t, "c": c}), flush=True)


def paired(env: dict[str, str], name: str, threads: str, rounds: int, batch: int) -> Any:
    """Each framework in a process of its own (no OpenMP runtime, allocator or BLAS shared
    between them: in one process torch's libgomp, loaded first, sets the wait policy of numba's
    threads too), rounds still alternated so that both meet the same machine; medians."""
    procs = {}
    try:
        # one after the other: each warms up alone, as a user's process would (lucid decides
        # its OpenMP threads' policy on its first split by whether other processes are busy)
        for fw in ("lucid", "torch"):
            cmd = [sys.executable, __file__, "--serve", name, fw, threads, str(batch)]
            p = procs[fw] = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True)  # fmt: skip
            assert p.stdout is not None
            json.loads(p.stdout.readline())
        times: dict[str, list[float]] = {fw: [] for fw in procs}
        cpu: dict[str, list[float]] = {fw: [] for fw in procs}
        order = list(procs.items())
        for r in range(rounds):
            for fw, p in order if r % 2 == 0 else order[::-1]:  # as ``worker``'s rounds
                assert p.stdin is not None and p.stdout is not None
                time.sleep(SETTLE_S)
                p.stdin.write("round\n")
                p.stdin.flush()
                r = json.loads(p.stdout.readline())
                times[fw].append(r["t"])
                cpu[fw].append(r["c"])
    except (json.JSONDecodeError, BrokenPipeError) as e:
        print(f"  paired workers failed: {e!r}", flush=True)
        return None
    finally:
        for p in procs.values():
            p.communicate("quit\n")
    return {fw: (statistics.median(t), statistics.median(cpu[fw])) for fw, t in times.items()}


def _run(env: dict[str, str], *args: Any) -> dict[str, Any] | None:
    cmd = [sys.executable, __file__, "--worker", *map(str, args)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"  worker {args} failed (rc {p.returncode}):\n{p.stderr[-1500:]}", flush=True)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def cpu_col(t: dict[str, Any]) -> str:
    """Each framework's process CPU time per step (not waiting for a core: on a loaded machine
    the fairer figure at one thread), "lucid/torch" in ms."""
    c = t.get("cpu", {})
    return f"{_fmt(c.get('lucid'), '.1f', 1e3)}/{_fmt(c.get('torch'), '.1f', 1e3)}"


def _fmt(v: float | None, spec: str, scale: float = 1.0) -> str:
    return "-" if v is None or v != v else format(v * scale, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--models",
        default="lenet5,resnet18",
        help="comma list: lenet5,resnet18,gpt,lstm,charrnn,gptgen",
    )
    ap.add_argument("--rounds", type=int, help="timed rounds (default 7 LeNet, 3 ResNet)")
    ap.add_argument("--batch-resnet", type=int, default=128, help="ResNet batch (default 128)")
    ap.add_argument("--quick", action="store_true", help="LeNet only, 3 rounds, env as given")
    ap.add_argument(
        "--apart",
        action="store_true",
        help="also time each framework in a process of its own (no interleaving)",
    )
    ap.add_argument(
        "--compile",
        action="store_true",
        help="instead: eager vs lucid.compile vs torch.compile, interleaved in one process",
    )
    ap.add_argument(
        "--paired",
        action="store_true",
        help="also time each framework in a process of its own, rounds interleaved",
    )
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--serve", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        name, fw, threads, batch = args.serve
        return serve(name, fw, threads, int(batch))
    if args.worker:
        name, mode, threads, rounds, batch = args.worker
        print(json.dumps(worker(name, mode, threads, int(rounds), int(batch))))
        return
    models = ["lenet5"] if args.quick else [m.strip() for m in args.models.split(",") if m]
    bad = set(models) - set(STEPS_PER_ROUND)
    if bad:
        ap.error(f"unknown model(s) {sorted(bad)}; choose from {','.join(STEPS_PER_ROUND)}")
    has_torch = importlib.util.find_spec("torch") is not None
    given = {k: os.environ[k] for k in OB_VARS if k in os.environ}
    envs = [("as set", dict(os.environ))]
    if given and not args.quick:
        envs.append(("unset", {k: v for k, v in os.environ.items() if k not in OB_VARS}))
    tver = metadata.version("torch") if has_torch else "not installed"
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}  {platform.node()}  "
          f"python {platform.python_version()}  numpy {np.__version__}  "
          f"lucid {metadata.version('lucid-core')}  torch {tver}")  # fmt: skip
    nver = metadata.version("numba") if importlib.util.find_spec("numba") else None
    import lucid  # here, not at the top: a torch-only worker must not load it (its VmHWM)

    numba_on = nver is not None and lucid.backends.cpu.numba_enabled
    print(f"lucid-core[numba]: {'numba ' + nver if nver else 'numba not installed'}, Winograd's "
          f"transforms {'compiled' if numba_on else 'in NumPy'}"
          + ("  (lucid.backends.cpu: numba off)" if nver and not numba_on else ""))  # fmt: skip
    print(f"cores: os.cpu_count()={os.cpu_count()}, usable={len(os.sched_getaffinity(0))}; "
          f"load average before: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    shown = ", ".join(f"{k}={given.get(k, '(unset)')}" for k in OB_VARS)
    print(f"OPENBLAS as set: {shown}"
          + ("" if len(envs) > 1 else "  (nothing to unset: one env setting)"))  # fmt: skip
    if not has_torch:
        print("torch is not importable: lucid's column alone")
    head = (f"{'model':16s} {'threads l/t':>12s} {'OPENBLAS':>8s} {'lucid ms':>9s} "
            f"{'torch ms':>9s} {'l/t':>6s} {'lucid MiB':>10s} {'torch MiB':>10s} "
            f"{'|dloss0|':>9s} {'cpu l/t ms':>15s}")  # fmt: skip
    if args.compile:
        return compile_table(models, args, envs[0][1])
    print(head + "\n" + "-" * len(head), flush=True)
    for name in models:
        batch = {"lenet5": 64, "resnet18": args.batch_resnet, "gpt": GPT["batch"],
                 "lstm": LSTM["batch"], "charrnn": 1, "gptgen": 1}[name]  # fmt: skip
        rounds = 3 if args.quick else args.rounds or DEFAULT_ROUNDS[name]
        for label, env in envs:
            for threads in ("default", "1"):
                t = _run(env, name, "time", threads, rounds, batch) or {}
                if args.apart:  # each framework alone in its process: no shared allocator,
                    for fw in ("lucid", "torch"):  # no second OpenMP runtime beside it
                        alone = _run(env, name, f"time:{fw}", threads, rounds, batch) or {}
                        t.setdefault("apart", {})[fw] = alone.get("median", {}).get(fw)
                mem = {fw: _run(env, name, fw, threads, rounds, batch) for fw in ("lucid", "torch")}
                med, loss0 = t.get("median", {}), t.get("loss0", {})
                lt, tt = med.get("lucid"), med.get("torch")
                ratio = lt / tt if lt and tt else None
                dl = abs(loss0["lucid"] - loss0["torch"]) if len(loss0) == 2 else None
                thr = f"{threads[:3]} {t.get('lucid_threads', '-')}/{t.get('torch_threads', '-')}"
                peak = {fw: (m or {}).get("peak") for fw, m in mem.items()}
                print(f"{name + f' b{batch}':16s} {thr:>12s} {label:>8s} {_fmt(lt, '9.2f', 1e3)} "
                      f"{_fmt(tt, '9.2f', 1e3):>9s} {_fmt(ratio, '6.2f'):>6s} "
                      f"{_fmt(peak['lucid'], '10.0f'):>10s} {_fmt(peak['torch'], '10.0f'):>10s} "
                      f"{_fmt(dl, '9.1e'):>9s} {cpu_col(t):>15s}", flush=True)  # fmt: skip
                fast = t.get("fastest", {})
                lf, tf = fast.get("lucid"), fast.get("torch")
                if lf and tf:  # the fastest round of each: steadier than the median where the
                    # machine's speed jumps between rounds (a VM's neighbours, docs/performance.md)
                    row = f"{'  (fastest)':16s} {thr:>12s} {label:>8s} {lf * 1e3:9.2f} "
                    print(row + f"{tf * 1e3:9.2f} {lf / tf:6.2f}", flush=True)
                rr = t.get("round_ratio")
                if rr:  # the median of each round's ratio
                    print(f"{'  (per round)':16s} {thr:>12s} {label:>8s} {'':>9s} {'':>9s} "
                          f"{rr:6.2f}", flush=True)  # fmt: skip
                if name == "gptgen" and lt and tt:
                    print(f"{'  tokens/s':16s} {thr:>12s} {label:>8s} {GEN_TOKENS / lt:9.0f} "
                          f"{GEN_TOKENS / tt:9.0f}", flush=True)  # fmt: skip
                if "apart" in t:
                    la, ta = t["apart"].get("lucid"), t["apart"].get("torch")
                    ra = la / ta if la and ta else None
                    row = f"{'  (apart)':16s} {thr:>12s} {label:>8s} {_fmt(la, '9.2f', 1e3)} "
                    print(row + f"{_fmt(ta, '9.2f', 1e3):>9s} {_fmt(ra, '6.2f'):>6s}", flush=True)
                if args.paired and has_torch:
                    pr = paired(env, name, threads, rounds, batch)
                    if pr:
                        (lp, lc), (tp, tc) = pr["lucid"], pr["torch"]
                        row = f"{'  (paired)':16s} {thr:>12s} {label:>8s} {lp * 1e3:9.2f} "
                        print(row + f"{tp * 1e3:9.2f} {lp / tp:6.2f} {'':>10s} {'':>10s} "
                              f"{'':>9s} {lc * 1e3:>7.1f}/{tc * 1e3:.1f}", flush=True)  # fmt: skip
    print(
        f"load average after: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}; ms = median "
        "per step; MiB = VmHWM of a process running that framework alone (imports included); "
        "cpu = median process CPU time per step (all its threads); (fastest) = each "
        "framework's fastest round; (per round) = the median of each round's lucid/torch"
    )


def compile_table(models: list[str], args: Any, env: dict[str, str]) -> None:
    """Per model and thread setting: median step of eager lucid, ``lucid.compile``, eager torch
    and ``torch.compile`` (one process, rounds interleaved), the compiled/eager ratios, and
    each compiled first call (the capture; torch's includes inductor's C++ build)."""
    cols = ("lucid", "lucid.compile", "torch", "torch.compile")
    head = (f"{'model':16s} {'threads':>7s} " + " ".join(f"{c + ' ms':>16s}" for c in cols)
            + f" {'lc/l':>6s} {'tc/t':>6s} {'lc/tc':>6s} {'first lc/tc ms':>16s}"
            + f" {'cpu lc/l':>9s} {'cpu ms l/lc':>13s}")  # fmt: skip
    print(head + "\n" + "-" * len(head), flush=True)
    for name in models:
        batch = {"lenet5": 64, "resnet18": args.batch_resnet, "gpt": GPT["batch"],
                 "lstm": LSTM["batch"], "charrnn": 1}[name]  # fmt: skip
        rounds = 3 if args.quick else args.rounds or DEFAULT_ROUNDS[name]
        for threads in ("default", "1"):
            t = _run(env, name, "compile", threads, rounds, batch) or {}
            med, first = t.get("median", {}), t.get("first", {})

            def ratio(a: str, b: str) -> str:
                x, y = med.get(a), med.get(b)  # noqa: B023
                return _fmt(x / y if x and y else None, "6.2f")

            cells = " ".join(f"{_fmt(med.get(c), '16.2f', 1e3)}" for c in cols)
            firsts = f"{_fmt(first.get('lucid.compile'), '.0f', 1e3)}/" + _fmt(
                first.get("torch.compile"), ".0f", 1e3
            )
            rl, rt = ratio("lucid.compile", "lucid"), ratio("torch.compile", "torch")
            rc = ratio("lucid.compile", "torch.compile")
            # CPU time per step (the process's, interleaved rounds): the figure that holds on
            # a loaded machine, where the wall clock waits for a core
            cpu = t.get("cpu", {})
            cl, cc = cpu.get("lucid"), cpu.get("lucid.compile")
            rcpu = _fmt(cc / cl if cl and cc else None, "9.2f")
            cms = f"{_fmt(cl, '.2f', 1e3)}/{_fmt(cc, '.2f', 1e3)}"
            print(f"{name + f' b{batch}':16s} {threads[:3]:>7s} {cells} {rl:>6s} {rt:>6s} "
                  f"{rc:>6s} {firsts:>16s} {rcpu:>9s} {cms:>13s}", flush=True)  # fmt: skip
    print(f"load average after: {'/'.join(f'{x:.2f}' for x in os.getloadavg())}; ms = median "
          "per step")  # fmt: skip


if __name__ == "__main__":
    main()
