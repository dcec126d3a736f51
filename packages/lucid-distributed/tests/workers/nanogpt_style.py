"""Run by the tests under lucid-run: the distributed parts of nanoGPT's train.py, verbatim in
spirit (environment variables, backend choice, DDP with device_ids, gradient accumulation by
require_backward_grad_sync, rank 0 as the master process)."""

from __future__ import annotations

import os

from common import SGD, say  # tests/workers/common.py: this folder is on sys.path

import lucid
import lucid.nn as nn
from lucid.distributed import destroy_process_group, init_process_group
from lucid.nn.parallel import DistributedDataParallel as DDP

backend = "gloo"  # nanoGPT's choice on CPU ('nccl' on GPUs)
ddp = int(os.environ.get("RANK", -1)) != -1
assert ddp, "not started by a launcher"
init_process_group(backend=backend)
ddp_rank = int(os.environ["RANK"])
ddp_local_rank = int(os.environ["LOCAL_RANK"])
ddp_world_size = int(os.environ["WORLD_SIZE"])
device = "cpu"
master_process = ddp_rank == 0
seed_offset = ddp_rank
gradient_accumulation_steps = 4
assert gradient_accumulation_steps % ddp_world_size == 0
gradient_accumulation_steps //= ddp_world_size

lucid.manual_seed(1337 + seed_offset)
model = nn.Sequential(nn.Embedding(16, 8), nn.Flatten(), nn.Linear(32, 16))
model = DDP(model, device_ids=[ddp_local_rank])
raw_model = model.module
optimizer = SGD(model.parameters(), lr=0.1, momentum=0.9)  # nanoGPT: AdamW
for it in range(3):
    for micro_step in range(gradient_accumulation_steps):
        model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        x = lucid.randint(0, 16, (2, 4))
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, x[:, 0]) / gradient_accumulation_steps
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
weights = [float(p.detach().sum().item()) for p in raw_model.parameters()]
say(
    f"rank {ddp_rank} local {ddp_local_rank} of {ddp_world_size} "
    f"threads {os.environ.get('OMP_NUM_THREADS')} weights {weights}"
)
if master_process:
    say("master done")
destroy_process_group()
