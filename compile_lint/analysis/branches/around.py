"""The `if`s around a node, up to its def: which side of each test the node is on.

Rules that ask "does this node run where X is known false?" (a tensor read under
`torch.is_grad_enabled()`, a load under `isinstance(m, OptimizedModule)`, a read under
`torch.jit.is_scripting()`) each read one test out of this walk."""
from __future__ import annotations

import ast
from typing import Iterator

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def tests_around(facts, node: ast.AST, conditional_expressions: bool = False,
                 stop: tuple = FUNCTIONS) -> Iterator[tuple[ast.AST, bool]]:
    """(test, truth) for each `if` around `node` (and each `a if test else b`, with
    `conditional_expressions`), innermost first, up to the first enclosing node of a `stop`
    type: `node` runs only where `test` is `truth`. `not` is taken off the test
    (`if not t: ... else: <node>` gives (t, True)); a node in a test itself is on no side.
    A conjunction that holds yields each of its operands after it (`if r < p and not
    test_mode:` gives (test_mode, False) too: stereoanywhere's augmentations, bench/dev43),
    as a disjunction that fails does."""
    child = node
    for anc in facts.ancestors(node):
        if (isinstance(anc, ast.If) or conditional_expressions and isinstance(anc, ast.IfExp)) and child is not anc.test:
            yield from sides(anc.test, child in anc.body if isinstance(anc, ast.If) else child is anc.body)
        if isinstance(anc, stop):
            return
        child = anc


def sides(test: ast.AST, truth: bool) -> Iterator[tuple[ast.AST, bool]]:
    """(test, truth) with `not` taken off, then the same for each operand that `test`
    being `truth` decides: every operand of an `and` that holds, of an `or` that fails."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, truth = test.operand, not truth
    yield test, truth
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if truth else ast.Or):
        for operand in test.values:
            yield from sides(operand, truth)
