"""Pass 1's shortcuts give what the longer way gives: the one walk of a file
(walk_by_type), the import statements in walk order, and the single-file regions."""
from __future__ import annotations

import ast
import os
import textwrap

from compile_lint.analysis.semantic.names import NameTable, imports_in_walk_order
from compile_lint.analysis.project.context import TreeShape
from compile_lint.analysis.reach.regions import ProjectIndex, summarize
from compile_lint.analysis.semantic.walk import walk, walk_by_type, walk_with_parents
from compile_lint.lint_file import single_file_regions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# imports at several depths, in defs, branches, handlers and a class, before and after
# deeper ones: the breadth-first order interleaves them unlike source order
NESTED_IMPORTS = textwrap.dedent(
    """
    import os
    def f():
        from torch import compile as c
        if x:
            import numpy as np
        return c
    try:
        from a import b
    except ImportError:
        import b
    class K:
        import torch as t
        def m(self):
            from .x import y as torch
    from torch import compile
    import torch.nn as nn; from q import r
    """
)

# every field that holds something other than nodes, beside the node fields: the walks
# skip identifier fields and test the items of Dict.keys and arguments.kw_defaults only
SYNTAX_CORNERS = textwrap.dedent(
    """
    from .. import a as b, c
    import d.e as f
    x: int = 1
    g = {**h, "k": 1, 2: i}
    def fn(p, /, q=1, *args, r, s=2, **kw) -> "T":
        global x
        def inner():
            nonlocal q
            return (y := q), f"{q!r:>{s}}", lambda t, *, u: t
        return [v async for v in w if v] if q else {k: v for k, v in kw.items()}
    @deco(1)
    class C(B, metaclass=M):
        z = x.attr[1:2, ::3]
    match cmd:
        case Point(x=0, y=yy) | [1, *rest] | {"k": v, **others} | None | str() as named:
            pass
    try:
        pass
    except* ValueError as err:
        raise Error() from err
    with open(p) as fh, other():
        del fh
    async def co():
        async with a as b:
            await b
        async for i in c:
            yield i
    assert not -x + ~y, "m"
    """
)


def _python_sources():
    folder = os.path.join(ROOT, "compile_lint")
    for base, _dirs, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(base, name), "rb") as fh:
                    yield os.path.join(base, name), fh.read()
    yield "nested.py", NESTED_IMPORTS.encode()
    yield "corners.py", SYNTAX_CORNERS.encode()


def test_walk_by_type_is_walk_with_parents_and_tree_shape():
    for path, data in _python_sources():
        tree = ast.parse(data)
        # the reference: ast's own children breadth-first, without the `ctx` markers the
        # walks skip (walk_with_parents is walk_by_type)
        nodes, parents = [tree], {}
        for node in nodes:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr_context):
                    continue
                parents[child] = node
                nodes.append(child)
        shape = TreeShape.of(tree, nodes, parents)
        nodes2, parents2, by_type = walk_by_type(tree)
        assert [id(n) for n in nodes2] == [id(n) for n in nodes], path
        assert [id(n) for n in walk(tree)] == [id(n) for n in nodes], path
        assert parents2 == parents, path
        assert walk_with_parents(tree)[1] == parents, path
        assert list(by_type) == list(shape.by_type), path
        for cls, found in by_type.items():
            assert [id(n) for n in found] == [id(n) for n in shape.by_type[cls]], (path, cls)


def test_imports_in_walk_order_is_the_walk_filtered():
    for path, data in _python_sources():
        tree = ast.parse(data)
        nodes, parents, by_type = walk_by_type(tree)
        expected = [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert imports_in_walk_order(by_type, parents) == expected, path
        from_nodes = NameTable.build(tree, "pkg.mod", False, nodes)
        from_imports = NameTable.build(tree, "pkg.mod", False, imports=expected)
        assert list(from_imports.bindings.items()) == list(from_nodes.bindings.items()), path
        assert from_imports.partials == from_nodes.partials and from_imports.local_names == from_nodes.local_names


def test_nested_imports_interleave_in_walk_order():
    tree = ast.parse(NESTED_IMPORTS)
    nodes, parents, by_type = walk_by_type(tree)
    found = imports_in_walk_order(by_type, parents)
    assert found == [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]
    # module level first, in source order, then one level down...: not source order
    assert [n.lineno for n in found][:4] == [2, 16, 17, 17]
    assert sorted(found, key=lambda n: (n.lineno, n.col_offset)) != found


def test_single_file_regions_is_the_index_of_one_file():
    fixtures = os.path.join(ROOT, "fixtures")
    seen = shortcut = 0
    for base, _dirs, files in os.walk(fixtures):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            with open(path, "rb") as fh:
                data = fh.read()
            try:
                tree = ast.parse(data)
            except SyntaxError:
                continue
            summary = summarize(tree, NameTable.build(tree, "fixture", False), path)
            expected = ProjectIndex([summary]).regions()
            got = single_file_regions(summary)
            assert got.keys() == expected.keys(), path
            seen += 1
            shortcut += not summary.sites and all(info.wraps is None for info in summary.defs.values())
    assert seen > 10 and 0 < shortcut < seen  # both ways are exercised
