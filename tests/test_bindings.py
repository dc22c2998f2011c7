"""The value model's bindings of one file as AST (analysis/reach/values.py FileBindings), which
the dtype and gradient analyses ask: scopes, the reaching rule, parameters, unpacking."""
from __future__ import annotations

import ast
import textwrap

from compile_lint.analysis.semantic.bindings import bindings_for
from compile_lint.analysis.semantic.facts import ModuleFacts
from compile_lint.analysis.semantic.names import NameTable
from compile_lint.analysis.tensors.precision import F16, precision_for
from compile_lint.config import Settings
from compile_lint.source import SourceFile


def facts_for(code: str) -> ModuleFacts:
    source = SourceFile("snippet.py", textwrap.dedent(code).encode())
    tree = source.parse()
    return ModuleFacts(source, tree, NameTable.build(tree, "snippet"), {}, Settings())


def use(facts, name: str, row: int) -> ast.Name:
    """The load of `name` on line `row`."""
    return next(
        n for n in facts.nodes(ast.Name)
        if n.id == name and n.lineno == row and isinstance(n.ctx, ast.Load)
    )


def reaching(code: str, name: str, row: int) -> list[tuple[str, str]]:
    facts = facts_for(code)
    found = bindings_for(facts).reaching(use(facts, name, row))
    return [(b.kind, facts.text(b.value) if b.value is not None else (b.arg.arg if b.arg else "")) for b in found]


def test_last_unconditional_binding_and_conditional_ones_after_it():
    code = """
    def f(x, c):
        y = x
        y = x * 2
        if c:
            y = x * 3
        return y
    """
    assert reaching(code, "y", 7) == [("assign", "x * 2"), ("assign", "x * 3")]


def test_a_use_reads_the_binding_before_its_own_statement():
    code = """
    def f(x):
        x = x + 1
        return x
    """
    assert reaching(code, "x", 3) == [("param", "x")]
    assert reaching(code, "x", 4) == [("assign", "x + 1")]


def test_enclosing_scope_gives_all_its_bindings_and_module_names_are_seen():
    code = """
    import torch
    SCALE = 2.0
    def outer(a):
        b = a.half()
        if a is None:
            b = a.float()
        def inner():
            return b * SCALE
        return inner
    """
    assert reaching(code, "b", 9) == [("assign", "a.half()"), ("assign", "a.float()")]
    assert reaching(code, "SCALE", 9) == [("assign", "2.0")]


def test_unpacking_and_loops_keep_their_source():
    code = """
    def f(pairs, g):
        a, b = g()
        for item in pairs:
            total = item
        return a, b, total
    """
    facts = facts_for(code)
    found = bindings_for(facts).reaching(use(facts, "b", 6))
    assert [(b.kind, b.index, facts.text(b.source)) for b in found] == [("unpack", 1, "g()")]
    loop = bindings_for(facts).reaching(use(facts, "item", 5))
    assert [(b.kind, facts.text(b.source)) for b in loop] == [("for", "pairs")]


def test_a_use_above_every_binding_in_a_loop_sees_them_all():
    code = """
    def f(xs):
        for x in xs:
            if x:
                acc = acc + x
            acc = x
        return 0
    """
    assert [k for k, _ in reaching(code, "acc", 5)] == ["assign", "assign"]


def test_precision_joins_the_dtypes_of_every_reaching_binding():
    code = """
    import torch
    def f(x, c):
        y = x.half()
        if c:
            y = y.float()
        RESULT = y * 2
        z = x.half()
        OTHER = z * 2
    """
    facts = facts_for(code)
    precision = precision_for(facts)
    result = next(n for n in facts.nodes(ast.Assign) if n.targets[0].id == "RESULT")
    other = next(n for n in facts.nodes(ast.Assign) if n.targets[0].id == "OTHER")
    assert precision.dtype(other.value) == F16
    assert precision.dtype(result.value) is None  # fp16 on one path, fp32 on the other: not known


def test_precision_loop_variable_holds_an_element_of_its_iterable():
    code = """
    import torch
    def f(a, b):
        for t in [a.half(), b.half()]:
            RESULT = t * 0.5
        for u in [a.half(), b.float()]:
            OTHER = u * 0.5
    """
    facts = facts_for(code)
    precision = precision_for(facts)
    result = next(n for n in facts.nodes(ast.Assign) if n.targets[0].id == "RESULT")
    other = next(n for n in facts.nodes(ast.Assign) if n.targets[0].id == "OTHER")
    assert precision.dtype(result.value) == F16
    assert precision.dtype(other.value) is None
