from __future__ import annotations

from .base import Case, Rule


class SyntaxError_(Rule):
    """
    ## What it does
    Reports a file that cannot be parsed as Python (a syntax error, undecodable
    bytes, a binary file named `.py`, Python 2 code). compile-lint reads files with the
    Python it runs on: syntax newer than that Python (on 3.11, PEP 701 f-strings that
    reuse their quotes, PEP 695's `type X = ...`, `def f[T](...)`, `class C[T]:`, and
    PEP 758's `except A, B:` of 3.14) is reported as "not linted: valid from Python 3.12
    on" (or 3.14), with what this Python's parser says, not as a syntax error of the
    file; run compile-lint on the project's own Python to lint such files. `except A, B:`
    counts as 3.14's only where the rest of the file parses once such clauses are
    parenthesized: in Python 2 code (`except IOError, e:` beside `print 'done'`) it is a
    syntax error of every Python 3 (DB's ic15 script, `bench/fresh_reads/` batch 18, said
    "valid from Python 3.14 on": judged false).

    ## Why is this bad?
    No other rule can look at a file that does not parse, so its hazards go unseen.
    `compile-lint fix` never rewrites such a file.

    ## Example
    ```python
    print "hello"
    ```

    ## Use instead
    ```python
    print("hello")
    ```

    ## Fix safety
    No fix.

    ## References
    - Python's `ast.parse`, which compile-lint uses to read files.
    """

    needs = ()
    code = "CL000"
    name = "syntax-error"
    summary = "File cannot be parsed, so it was not linted"
    valid = [Case("x = 1\n")]
    invalid = [Case("def f(:\n    pass\n", at=[(1, 7)])]

    def check(self, facts):
        return iter(())  # the engine reports parse failures itself
