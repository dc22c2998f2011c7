"""The folders a module puts on `sys.path` when it is imported, read without running it.

Detection and tracking code that grew out of py-faster-rcnn starts its scripts with
`import _init_paths`, a module next to them that does

    this_dir = osp.dirname(__file__)
    add_path(osp.join(this_dir, "lib"))     # def add_path(p): sys.path.insert(0, p)

after which `from model.model import create_model` is `lib/model/model.py`
(CenterTrack in bench/dev11, GPEN in bench/dev2). The region index looks a module name up
in these folders too (ProjectIndex.candidates): the file's own additions and those of the
project modules it imports.

Paths spelled from `__file__` are read (`os.path.dirname`, `abspath`, `realpath`,
`normpath`, `os.path.join` with string constants, `pathlib.Path(__file__).parent / "lib"`,
`str(...)`), at module level, in order. A relative constant (`sys.path.append('./deploy')`)
is relative to the working directory, which the code does not fix: it is kept with the
WORKING_DIR prefix, and the index takes it from the folders the script may be run from (its
own and those above it: YOLO-World's demo, run from the repository root, bench/dev33).
"""
from __future__ import annotations

import ast
import posixpath
from typing import Optional

from ..semantic.names import NameTable
from ..semantic.walk import walk

_FILE = "<file>"  # the value of `__file__`; any other value is a folder relative to the file's own
_SAME = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "builtins.str", "pathlib.Path",
                   "os.fspath"})
_ADDERS = frozenset({"sys.path.insert", "sys.path.append"})
WORKING_DIR = "cwd:"  # prefix of a folder relative to the working directory, not to the file


def added_folders(tree: ast.Module, names: NameTable) -> tuple[str, ...]:
    """The folders (relative to the file's folder, `/`-separated, normalized) that the
    module's top-level statements add to `sys.path`."""
    if not any(isinstance(s, (ast.Import, ast.ImportFrom)) and any(a.name.split(".")[0] == "sys" for a in s.names)
               or isinstance(s, ast.ImportFrom) and s.module == "sys" for s in tree.body):
        return ()
    helpers = _adding_helpers(tree, names)
    env: dict[str, Optional[str]] = {}
    out: list[str] = []
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = _path(stmt.value, env, names)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            dotted = names.resolve(call.func)
            arg = None
            if dotted == "sys.path.insert" and len(call.args) == 2:
                arg = call.args[1]
            elif dotted == "sys.path.append" and len(call.args) == 1:
                arg = call.args[0]
            elif isinstance(call.func, ast.Name) and call.func.id in helpers:
                index = helpers[call.func.id]
                arg = call.args[index] if index < len(call.args) else None
            folder = _path(arg, env, names) if arg is not None else None
            if folder is None and isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value \
                    and not posixpath.isabs(arg.value):
                folder = WORKING_DIR + posixpath.normpath(arg.value)
            if folder is not None and folder != _FILE and folder not in out:
                out.append(folder)
    return tuple(out)


def _top_level(body: list):
    """The module's statements in order, those of its `if` / `try` blocks included
    (`if str(ROOT) not in sys.path: sys.path.append(str(ROOT))`)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
        else:
            yield stmt


def _adding_helpers(tree: ast.Module, names: NameTable) -> dict[str, int]:
    """{name: parameter index} of the module-level defs that put a parameter on `sys.path`."""
    found: dict[str, int] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        params = [a.arg for a in stmt.args.posonlyargs + stmt.args.args]
        for node in walk(stmt):
            if isinstance(node, ast.Call) and names.resolve(node.func) in _ADDERS and node.args:
                arg = node.args[-1]
                if isinstance(arg, ast.Name) and arg.id in params:
                    found[stmt.name] = params.index(arg.id)
                    break
    return found


def _path(expr: ast.AST, env: dict, names: NameTable) -> Optional[str]:
    """`expr` as _FILE or a folder relative to the file's folder; None when not told."""
    if isinstance(expr, ast.Name):
        return _FILE if expr.id == "__file__" else env.get(expr.id)
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":
        return _dirname(_path(expr.value, env, names))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return _join(_path(expr.left, env, names), [expr.right])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add) and isinstance(expr.right, ast.Constant) \
            and isinstance(expr.right.value, str) and expr.right.value.startswith("/"):
        return _join(_path(expr.left, env, names), [ast.Constant(expr.right.value.lstrip("/"))])  # `here + "/lib"`
    if isinstance(expr, ast.JoinedStr) and len(expr.values) == 2 and isinstance(expr.values[0], ast.FormattedValue) \
            and isinstance(expr.values[1], ast.Constant) and str(expr.values[1].value).startswith("/"):
        # `f"{here}/lib"`
        return _join(_path(expr.values[0].value, env, names), [ast.Constant(str(expr.values[1].value).lstrip("/"))])
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "parents" \
            and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, int) and expr.slice.value >= 0:
        path = _path(expr.value.value, env, names)  # `Path(__file__).resolve().parents[1]`
        for _ in range(expr.slice.value + 1):
            path = _dirname(path)
        return path
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in ("resolve", "absolute") and not expr.args:
        return _path(func.value, env, names)  # `Path(__file__).resolve()`
    dotted = names.resolve(func)
    if dotted == "os.path.dirname" and len(expr.args) == 1:
        return _dirname(_path(expr.args[0], env, names))
    if dotted in _SAME and len(expr.args) == 1:
        return _path(expr.args[0], env, names)
    if dotted == "os.path.join" and expr.args:
        return _join(_path(expr.args[0], env, names), expr.args[1:])
    return None


def _dirname(path: Optional[str]) -> Optional[str]:
    if path is None:
        return None
    return "." if path == _FILE else posixpath.normpath(posixpath.join(path, ".."))


def _join(path: Optional[str], parts: list) -> Optional[str]:
    if path is None or path == _FILE:
        return None
    for part in parts:
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)) or posixpath.isabs(part.value):
            return None
        path = posixpath.join(path, part.value) if part.value else path
    return posixpath.normpath(path)
