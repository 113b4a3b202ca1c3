"""A minimal launcher: runs COMMAND once per rank with the variables a real
launcher sets (RANK, LOCAL_RANK, WORLD_SIZE), waits for all of them and
exits with the first non-zero status (0 when all succeeded).

    two_ranks.py [--ranks N] -- COMMAND ARGS...
"""
import os
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    ranks = 2
    if len(argv) >= 2 and argv[0] == "--ranks":
        ranks = int(argv[1])
        argv = argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or ranks < 1:
        print("usage: two_ranks.py [--ranks N] -- COMMAND ARGS...", file=sys.stderr)
        return 2
    children = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks))
        children.append(subprocess.Popen(argv, env=env))
    statuses = [child.wait() for child in children]
    print(f"launcher: rank statuses {statuses}", flush=True)
    return next((s for s in statuses if s != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
