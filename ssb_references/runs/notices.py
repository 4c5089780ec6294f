"""Warnings about input the commands go on without (a torn perflog line, a record left out):
one line each on stderr, so that a cron mail shows them, and never more than a screenful
from one file."""
import sys

# Warnings about one file: a perflog years long may hold many bad lines; these many say so.
MAX_PER_FILE = 5


def warn(text):
    print(f'warning: {text}', file=sys.stderr)


class PerFile:
    """Warnings about one file: the first MAX_PER_FILE shown, then how many more there were."""

    def __init__(self, path):
        self.path = path
        self.count = 0

    def warn(self, text):
        self.count += 1
        if self.count <= MAX_PER_FILE:
            warn(f'{self.path}:{text}')

    def close(self):
        if self.count > MAX_PER_FILE:
            warn(f'{self.path}: {self.count - MAX_PER_FILE} more bad line(s) skipped')
