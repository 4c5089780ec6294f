"""How many entries survive concurrent ``ssb-references update`` runs on one reference file:
each try starts PARTITIONS updates at once (one partition each) on a new directory, and
counts the partitions in the file afterwards. Before writers took a lock, entries were lost
while every update said ``wrote ...`` and exited 0.

    python benchmarks/concurrent_updates.py --tries 10
"""
import argparse
import os
import pathlib
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, 'tests'))
from test_shared_writers import PARTITIONS, concurrent_updates, partition_perflogs  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--tries', type=int, default=10)
    args = p.parse_args()
    kept_total, complete = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        perflogs = partition_perflogs(pathlib.Path(tmp))
        for n in range(args.tries):
            statuses, found = concurrent_updates(perflogs, pathlib.Path(tmp) / f'refs{n}')
            ok = sum(1 for s, _ in statuses if s == 0)
            kept_total += len(found)
            complete += len(found) == PARTITIONS
            print(f'try {n + 1}: {len(found)} of {PARTITIONS} partitions kept, {ok} of '
                  f'{PARTITIONS} updates exited 0', flush=True)
    print(f'{kept_total} of {PARTITIONS * args.tries} entries kept; {complete} of {args.tries} '
          f'tries kept all')


if __name__ == '__main__':
    main()
