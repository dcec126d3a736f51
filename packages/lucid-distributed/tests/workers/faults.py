"""Run by the tests on 2 ranks: rank 1 raises (argument ``kill``: dies; ``stuck``: sleeps;
``exit``: calls ``sys.exit(3)``) while rank 0 waits in a collective; the job must end non-zero
with the error, never hang."""

from __future__ import annotations

import datetime
import os
import signal
import sys
import time

import lucid
import lucid.distributed as dist


def main() -> None:
    how = sys.argv[1] if len(sys.argv) > 1 else "raise"
    dist.init_process_group(timeout=datetime.timedelta(seconds=2))
    if dist.get_rank() == 1:
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if how == "exit":
            sys.exit(3)
        if how == "stuck":
            time.sleep(60)  # rank 0's all_reduce times out after 2 s and ends the job
        raise ValueError("rank 1 failed on purpose")
    dist.all_reduce(lucid.ones(3))  # rank 0 waits here for a rank that never comes


if __name__ == "__main__":
    main()
