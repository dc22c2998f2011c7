"""Structure the codebase keeps: no import cycles in compile_lint/, no monkey patching of
facts, every rule declares the facts it asks for."""
import ast
import os
import sys

from compile_lint.analysis.semantic.facts import Fact
from compile_lint.rules import all_rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "compile_lint")


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _imports() -> dict[str, set[str]]:
    """Module -> the compile_lint modules it imports at module level (not inside defs,
    which run later and cannot make an import cycle at load time)."""
    graph: dict[str, set[str]] = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            module = _module_name(path)
            package = module if name == "__init__.py" else module.rpartition(".")[0]
            with open(path, "rb") as fh:
                tree = ast.parse(fh.read())
            found = set()
            for node in tree.body:
                if isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks are never run
                    continue
                if isinstance(node, ast.Import):
                    found |= {a.name for a in node.names if a.name.startswith("compile_lint")}
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package.split(".")
                        base = base[: len(base) - node.level + 1]
                        target = ".".join(base + ([node.module] if node.module else []))
                    else:
                        target = node.module or ""
                    if not target.startswith("compile_lint"):
                        continue
                    found.add(target)
                    for alias in node.names:  # `from . import cache` imports a module
                        found.add(f"{target}.{alias.name}")
            graph[module] = found
    return {m: {t for t in targets if t in graph and t != m} for m, targets in graph.items()}


def test_no_import_cycles():
    graph = _imports()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module):
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            # importing a package's submodule runs the package's __init__ first
            if state.get(target) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(target):] + [target]))
            if target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_no_patched_attributes_or_frame_introspection():
    """In the lint pipeline (`record` traces a running program, where frames are its
    input, and `verify` runs user code: both are outside it)."""
    offenders = []
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "record", "verify")]
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    text = fh.read()
                for bad in ("facts.__dict__", "_getframe", "facts._cl_", "setattr(facts", "._cl_parent"):
                    if bad in text:
                        offenders.append(f"{name}: {bad}")
    assert offenders == []


def test_rules_declare_facts():
    for code, rule in all_rules().items():
        assert isinstance(rule.needs, tuple), code
        assert all(isinstance(f, type) and issubclass(f, Fact) for f in rule.needs), code
        assert not hasattr(rule, "uses_regions"), f"{code}: `uses_regions` is gone; declare `needs`"


def test_a_fact_declares_the_facts_it_asks_for():
    """A rule may ask for what its declared facts declare (CompiledValues reads the
    bindings), and for nothing else."""
    import pytest

    from compile_lint.analysis.semantic.bindings import BindingsFact
    from compile_lint.analysis.compiled.values import CompiledValuesFact
    from compile_lint.analysis.semantic.facts import ModuleFacts, RegionsFact, UndeclaredFact, declared_facts
    from compile_lint.analysis.semantic.names import NameTable
    from compile_lint.source import SourceFile

    source = SourceFile("m.py", b"import torch\nf = torch.compile(g)\n")
    tree = source.parse()
    facts = ModuleFacts(source, tree, NameTable.build(tree, "m"))
    facts.project.allowed = declared_facts((CompiledValuesFact,))
    assert facts.get(BindingsFact) is not None
    with pytest.raises(UndeclaredFact):
        facts.get(RegionsFact)
    facts.project.allowed = frozenset({CompiledValuesFact})
    with pytest.raises(UndeclaredFact):
        ModuleFacts(source, tree, NameTable.build(tree, "m"), project=facts.project).get(BindingsFact)


def test_rules_hold_detection_only():
    """A rule is its page plus a short function: its own logic (scripts/rule_sizes.py
    counts it) stays within the limits, and shared reasoning lives in analysis/."""
    sys.path.insert(0, os.path.join(os.path.dirname(PACKAGE), "scripts"))
    try:
        import rule_sizes
    finally:
        sys.path.pop(0)
    sizes = rule_sizes.sizes()
    assert sizes, "no rule modules found"
    assert sizes[0][1] <= rule_sizes.LARGEST_LIMIT, sizes[0]
    assert sum(lines for _, lines in sizes) <= rule_sizes.TOTAL_LIMIT


def test_rule_sizes_count_logic_not_pages_or_cases():
    sys.path.insert(0, os.path.join(os.path.dirname(PACKAGE), "scripts"))
    try:
        import rule_sizes
    finally:
        sys.path.pop(0)
    source = '''
import ast

class Rule:
    """A long page.

    More page.
    """
    valid = [
        "x = 1",
    ]
    valid += [
        "y = 2",
    ]

    def check(self, facts):
        # a comment
        return [node for node in ast.walk(facts.tree)]
'''
    assert rule_sizes.logic_lines(source) == 3  # class line, def line, return line
