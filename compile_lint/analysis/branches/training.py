"""Code that runs only in training mode, which no trace or export records.

A trace or an export is taken for inference, in eval mode: `torch.onnx.export` sets it
by default, and a module traced or exported in training mode is CL106's finding. So a
branch under `if self.training:` is not in the recorded graph, and neither is a helper
method the class calls only there (an MAE's `random_masking`, called under
`if self.training and self.mask_ratio > 0:`).
"""
from __future__ import annotations

import ast
from typing import Optional

from ..modules.classes import self_calls
from ..semantic.signatures import parameter_names
from .around import tests_around

TRAINING_PARAMETERS = frozenset({"training", "is_training"})  # `f(x, self.training)` passed on


def training_only(facts, node: ast.AST, tests: Optional[list] = None) -> bool:
    """`node` runs only in training mode: in `if self.training:` (or `if training:`, a
    parameter of its function, as callers pass `self.training` on), after `not
    self.training` in the `else`, or after such a test in an `and` (`if training and
    self.iter == n:`; yolov7_d2's detectors, bench/dev21: the iteration counter a training
    step reads); or anywhere in a method every call of which in its class
    (`self.random_masking(x)`) is itself training-only. `tests`: tests_around(node), when
    the caller has read it already."""
    func = facts.enclosing_function(node)
    if func is None or isinstance(func, ast.Lambda):
        return False
    if _training_only_here(facts, node, func, list(tests_around(facts, node)) if tests is None else tests):
        return True
    calls = self_calls(facts, func)
    return bool(calls) and all(
        _training_only_here(facts, call, caller, list(tests_around(facts, call))) for call, caller in calls
    )


def _training_only_here(facts, node: ast.AST, func: ast.AST, tests: list) -> bool:
    args = func.args
    me = args.args[0].arg if args.args else None
    params = parameter_names(args)

    def is_training(test: ast.AST) -> bool:
        if isinstance(test, ast.Attribute):
            return test.attr == "training" and isinstance(test.value, ast.Name) and test.value.id == me
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):  # `if training and ...:`
            return any(is_training(v) for v in test.values)
        return isinstance(test, ast.Name) and test.id in TRAINING_PARAMETERS and test.id in params

    if any(truth and is_training(test) for test, truth in tests):
        return True
    child = node
    for anc in facts.ancestors(node):
        if anc is func:
            return False
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And) and child in anc.values:
            if any(is_training(v) for v in anc.values[:anc.values.index(child)]):
                return True
        child = anc
    return False
