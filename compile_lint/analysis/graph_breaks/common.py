"""What the graph-break rules (CL508 and the CL5xx family) share: whether a construct
runs where Dynamo traces it, the official ID and texts of the break it causes, whether
it sits in a loop (then Dynamo runs the whole frame eagerly), and the finding's message.

A break is reported only in code a `torch.compile` region reaches, outside branches that
run only eagerly (`if not torch.compiler.is_compiling():`, the `else` of
`torch.jit.is_scripting()`...: region_queries.eager_only), and not when the Dynamo flag
that keeps the construct in the graph is on (`capture_scalar_outputs`,
`capture_dynamic_output_shape_ops`: region_queries.dynamo_flag_on).

**In a loop.** When the break sits in the body of a `for`/`while` loop of its function,
Dynamo gives up on that function's whole frame: "graph break in loop" (GB7000), measured
by scripts/measure/graph_break_in_loop.py (0 graphs, the frame runs eagerly). Dynamo's
test (`maybe_has_backedge`, symbolic_convert.py) is a backward jump after the break
before the frame's first return: a loop around it, not a loop after it. Not in a loop
(measured by scripts/measure/graph_break_causes.py): a `while` loop's own test (its
first evaluation comes before the jump back), a `for` loop's iterable, a loop's `else`,
and a comprehension (its own frame on Python 3.11: a plain break).
"""
from __future__ import annotations

import ast
from typing import Optional

from dataclasses import replace

from ..reach.declared import recorded_breaks, recorded_counts
from ..compiled.values import chain_text
from ..semantic.facts import FUNCTION_NODES, ModuleFacts
from ..semantic.signatures import parameter_defaults
from .ids import LOOP_ID, describe
from ..reach.queries import dynamo_flag_on, eager_only
from ..branches.passed_flags import closed_by_compiled_callers
from ..tensors.calls import flow_for
from ..tensors.kinds import MaskGuess, TensorGuess, not_tensors_at, plainly_not_mask, plainly_not_tensor

COMPOUND = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Match)
# what a recorded run (`compile-lint record`, with its break hooks) saw there
RECORDED = {
    "confirmed": " (confirmed: a recorded run broke here)",
    "compiled": " (a recorded run compiled this code and did not break here)",
    "not": " (not reached by the recorded run)",
}


def loop_of(facts: ModuleFacts, node: ast.AST) -> Optional[ast.AST]:
    """The function whose loop holds `node` (None when no loop of its function does).
    A `for` loop's iterable and a `while` loop's `else` run once: not in the loop."""
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, FUNCTION_NODES):
            return None
        if isinstance(anc, (ast.For, ast.AsyncFor)) and child is not anc.iter and child not in anc.orelse:
            return facts.enclosing_function(anc)
        if isinstance(anc, ast.While) and child is not anc.test and child not in anc.orelse:
            # (the test's first evaluation comes before any backward jump: measured, a
            # `while tensor.any():` breaks twice and the frame is still compiled)
            return facts.enclosing_function(anc)
        child = anc
    return None


def static_gate(facts: ModuleFacts, node: ast.AST) -> str:
    """When a condition Dynamo reads as a constant decides whether `node` runs: "when
    training" (when_training), "for float16 inputs" (behind `h.dtype == torch.float16 and
    ...`, T5's overflow clamp); else ""."""
    if when_training(facts, node):
        return "when training"
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            index = next((i for i, v in enumerate(anc.values) if v is child), 0)
            for earlier in anc.values[:index]:
                if isinstance(earlier, ast.Compare) and len(earlier.ops) == 1 and isinstance(earlier.ops[0], ast.Eq) \
                        and isinstance(earlier.left, ast.Attribute) and earlier.left.attr == "dtype":
                    dtype = facts.resolve(earlier.comparators[0]) or ""
                    if dtype.startswith("torch."):
                        return f"for {dtype[6:]} inputs"
        if isinstance(anc, FUNCTION_NODES):
            return ""
        child = anc
    return ""


def when_training(facts: ModuleFacts, node: ast.AST) -> bool:
    """`node` runs only in train mode: under `if self.training:` (rng.train_mode_only) or
    behind `self.training and ...` (transformers' LayerDrop: `if self.training and
    (torch.rand([]) < self.layerdrop):`). Dynamo reads `self.training` as a constant: in
    eval mode the tensor test is never traced, in training it breaks
    (scripts/measure/graph_break_causes.py)."""
    from ..branches.compiling import single_binding
    from ..tensors.rng import train_mode_only

    if train_mode_only(facts, node):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand  # `if not skip_the_layer or ...:`
    if isinstance(node, ast.Name):
        # `skip = self.training and i > 0 and (p < layerdrop)` then `if skip:` (transformers' wavlm)
        bound = single_binding(facts, node)
        if isinstance(bound, ast.BoolOp) and isinstance(bound.op, ast.And) \
                and any(chain_text(v) == "self.training" for v in bound.values[:-1]):
            return True
    child = node
    for anc in facts.ancestors(node):
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            index = next((i for i, v in enumerate(anc.values) if v is child), 0)
            if any(chain_text(v) == "self.training" for v in anc.values[:index]):
                return True
        if isinstance(anc, FUNCTION_NODES):
            return False
        child = anc
    return False


def behind_absent_input(facts: ModuleFacts, node: ast.AST) -> bool:
    """`node` reads an optional input behind a short-circuit that skips it when the input
    is absent: `mask is not None and mask.sum().item() > 0`, with `mask` a parameter whose
    default is None. Whether it breaks depends on the caller passing one (the model runs
    without it): not reported."""
    func = facts.enclosing_function(node)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    defaults = parameter_defaults(func.args)
    optional = {name for name, d in defaults.items() if isinstance(d, ast.Constant) and d.value is None}
    if not optional:
        return False
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & optional
    child = node
    for anc in facts.ancestors(node):
        if anc is func:
            return False
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            index = next((i for i, v in enumerate(anc.values) if v is child), 0)
            for earlier in anc.values[:index]:
                if _present_test(earlier) & read:
                    return True
        child = anc
    return False


def _present_test(test: ast.AST) -> set:
    """Names `test` requires to be given: `p is not None`, `p`."""
    if isinstance(test, ast.Name):
        return {test.id}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return {test.left.id}
    return set()


class Breaks:
    """One file's graph-break reporting for one rule: tensor and mask guesses per
    function (computed once), and findings that carry the break's ID."""

    def __init__(self, rule, facts: ModuleFacts):
        self.rule = rule
        self.facts = facts
        self._tensors: dict[int, Optional[TensorGuess]] = {}
        self._masks: dict[int, MaskGuess] = {}
        self._eager_helpers: dict[int, bool] = {}

    def compiled_nodes(self, *types: type):
        """The file's nodes of `types` inside a compiled region. `report` keeps only those,
        and what it reports lies in the node asked about: asking the tensor flow about
        code outside every compiled region first was most of CL508's time on corpus M."""
        in_region = self.facts.in_region
        return (node for node in self.facts.nodes(*types) if in_region(node, "compiled") is not None)

    def tensors(self, node: ast.AST) -> Optional[TensorGuess]:
        """The tensor guess of the function holding `node`, when that runs compiled."""
        func = self.facts.enclosing_function(node)
        if func is None:
            return None
        key = id(func)
        if key not in self._tensors:
            # the file's call flow: returns, callers' arguments and buffers (tensor_calls.py)
            self._tensors[key] = flow_for(self.facts).guess(func) if self.facts.in_region(node, "compiled") else None
        return self._tensors[key]

    def masks(self, node: ast.AST) -> Optional[MaskGuess]:
        tensors = self.tensors(node)
        if tensors is None:
            return None
        key = id(tensors.func)
        if key not in self._masks:
            self._masks[key] = flow_for(self.facts).masks(tensors.func)
        return self._masks[key]

    def _called_only_eagerly(self, node: ast.AST) -> bool:
        """`node` sits in a private module-level helper (`_check_range`) that every call in
        its file makes from code Dynamo does not trace (`if not is_compiling(): _check_range(x)`,
        kornia's metrics): a private name is not called from other files."""
        func = self.facts.enclosing_function(node)
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.name.startswith("_") \
                or func.name.startswith("__") or func not in self.facts.tree.body:
            return False
        key = id(func)
        if key not in self._eager_helpers:
            calls = [c for c in self.facts.nodes(ast.Call) if isinstance(c.func, ast.Name) and c.func.id == func.name]
            self._eager_helpers[key] = bool(calls) and all(eager_only(self.facts, c) for c in calls)
        return self._eager_helpers[key]

    def is_tensor(self, node: ast.AST, expr: ast.AST) -> bool:
        """`expr`, read at `node`, holds a tensor (an `isinstance` test above may say it cannot)."""
        if plainly_not_tensor(self.facts, expr):
            return False
        guess = self.tensors(node)
        if guess is None:
            return False
        guess.hidden = not_tensors_at(self.facts, node)
        try:
            return guess.is_tensor(expr)
        finally:
            guess.hidden = frozenset()

    def only_tensor(self, node: ast.AST, expr: ast.AST) -> bool:
        """`expr`, read at `node`, holds a tensor on every assignment (TensorGuess.only_tensor)."""
        if plainly_not_tensor(self.facts, expr):
            return False
        guess = self.tensors(node)
        if guess is None:
            return False
        guess.hidden = not_tensors_at(self.facts, node)
        try:
            return guess.only_tensor(expr)
        finally:
            guess.hidden = frozenset()

    def is_mask(self, node: ast.AST, expr: ast.AST) -> bool:
        if plainly_not_mask(expr):
            return False
        guess = self.masks(node)
        if guess is None:
            return False
        self.tensors(node).hidden = not_tensors_at(self.facts, node)
        try:
            return guess.is_mask(expr, node)
        finally:
            self.tensors(node).hidden = frozenset()

    def report(self, node: ast.AST, what: str, gb_id: str, captured_by: Optional[str] = None,
               fill: Optional[dict] = None, why: str = "forces a graph break"):
        """A finding at `node` for the construct `what` (shown in backquotes), or None when
        it does not run compiled. `captured_by`: the Dynamo flag that keeps it in the graph."""
        facts = self.facts
        region = facts.in_region(node, "compiled")
        if region is None or eager_only(facts, node) or (captured_by and dynamo_flag_on(facts, region, captured_by)):
            return None
        if behind_absent_input(facts, node) or self._called_only_eagerly(node) \
                or closed_by_compiled_callers(facts, node):
            return None
        loop = loop_of(facts, node)
        loop_name = getattr(loop, "name", None) if loop is not None else None
        func = facts.enclosing_function(node)
        verdict = recorded_breaks(region, facts.path, self._rows(node), facts.qualname_of(func) if func else None)
        info = describe(gb_id, facts.project.target_torch, fill, in_loop=loop_name)
        if info is not None and verdict is not None:
            info = replace(info, recorded=verdict)
        gate = static_gate(facts, node)
        if gate:
            why += f" {gate}"
        message = f"{what} in compiled code {why} ({gb_id})"
        if loop_name:
            message += f"; in a loop, so Dynamo runs all of `{loop_name}` eagerly ({LOOP_ID})"
        message += recorded_counts(region, "graph_breaks") if verdict is None else RECORDED[verdict.split()[0]]
        return self.rule.finding(facts, node, message, region=region, graph_break=info)

    def _rows(self, node: ast.AST) -> range:
        """The rows Dynamo may name for a break at `node`: its simple statement's, or the
        node's own in a compound statement's header."""
        stmt = self.facts.statement_of(node)
        span = node if stmt is None or isinstance(stmt, COMPOUND) else stmt
        return range(span.lineno, (getattr(span, "end_lineno", None) or span.lineno) + 1)
