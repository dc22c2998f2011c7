from __future__ import annotations

from .base import Case, Rule


class IoError(Rule):
    """
    ## What it does
    Reports a path that cannot be read: a file or folder named on the command line that
    does not exist, a file or folder without read permission, a broken symbolic link or
    a loop of them.

    ## Why is this bad?
    Nothing in a file that cannot be read is linted, so its hazards go unseen. As Ruff
    reports this as a finding (E902 `io-error`) rather than stopping the run, so does
    compile-lint: the other files are checked, and the run exits 1. The code is CL001,
    beside CL000 (syntax-error): the family of findings about a file rather than its
    code (CL0xx); Ruff's E902 would clash with pycodestyle's codes in a shared config.
    Deselect it (`ignore = ["CL001"]`) to have such paths reported as errors (exit 2)
    instead. A notebook that is not valid JSON or not nbformat 4 is still an error
    (exit 2): the file is there, but it is not a notebook compile-lint can read.

    ## Example
    ```sh
    compile-lint check src/ missing.py
    # missing.py:1:1: CL001 no such file or directory
    ```

    ## Use instead
    Name paths that exist; give the linter read permission.

    ## Fix safety
    No fix.

    ## References
    - Ruff's E902 (io-error).
    """

    needs = ()
    code = "CL001"
    name = "io-error"
    summary = "Path cannot be read, so it was not linted"
    valid = [Case("x = 1\n")]
    invalid = []  # a case is code, which can always be read: tests/test_cli.py covers it

    def check(self, facts):
        return iter(())  # the command line reports unreadable paths itself
