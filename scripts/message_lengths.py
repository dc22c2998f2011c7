"""Median and max length of the finding messages pinned in fixtures/rules/*/*.expected.

    python scripts/message_lengths.py            # the working tree
    python scripts/message_lengths.py bb84a95   # the files at a revision
"""
from __future__ import annotations

import statistics
import subprocess
import sys

PREFIX = "  message: "


def messages(rev: str | None) -> list[str]:
    args = ["git", "grep", "-h", "^" + PREFIX]
    args += [rev, "--", "fixtures/rules/*.expected"] if rev else ["--", "fixtures/rules/*.expected"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line[len(PREFIX):] for line in out.splitlines()]


def main() -> None:
    found = messages(sys.argv[1] if len(sys.argv) > 1 else None)
    lengths = [len(m) for m in found]
    print(
        f"messages={len(lengths)} median={statistics.median(lengths)} max={max(lengths)} "
        f"over_120={sum(n > 120 for n in lengths)} over_160={sum(n > 160 for n in lengths)}"
    )


if __name__ == "__main__":
    main()
