"""The read-and-parse loop the CPU benches share: each .py file as pass 1 reads it.

    from parsed_files import parsed_files      # (a bench script's own folder is on sys.path)

compile_lint is imported when the loop starts, not here, so a bench that first puts
another checkout on sys.path (summary_digests.py) reads its files with that checkout's
code."""
from __future__ import annotations

from typing import Iterable, Iterator


def parsed_files(paths: Iterable[str]) -> Iterator[tuple]:
    """(path, source, tree, module, is_package) for each file that parses; the others
    are skipped, as `check` reports them and lints nothing there."""
    from compile_lint.analysis.semantic.names import module_name_for
    from compile_lint.source import ParseFailure, source_for

    for path in paths:
        with open(path, "rb") as fh:
            source = source_for(path, fh.read())
        try:
            tree = source.parse()
        except ParseFailure:
            continue
        yield (path, source, tree, *module_name_for(path))
