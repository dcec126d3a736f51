"""Run by the tests on 2 ranks: rank 1 raises (or dies) while rank 0 waits in a collective;
the job must end non-zero with rank 1's error, never hang."""

from __future__ import annotations

import os
import signal
import sys

import lucid
import lucid.distributed as dist


def main() -> None:
    dist.init_process_group()
    if dist.get_rank() == 1:
        if sys.argv[1:] == ["kill"]:
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("rank 1 failed on purpose")
    dist.all_reduce(lucid.ones(3))  # rank 0 waits here for a rank that never comes


if __name__ == "__main__":
    main()
