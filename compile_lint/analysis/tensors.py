"""A cheap guess at which expressions are tensors, inside one function.

Dynamo graph-breaks on Python-level reads of tensor values (`bool(t)`, `if t:`,
`t.item()`), so CL508 must tell a tensor from a Python number without running
anything. The guess is deliberately conservative: a value is a tensor when it
comes from a torch op, a tensor method, arithmetic on a tensor, or a parameter
annotated as a Tensor. An unannotated parameter is unknown (it may be an int).
"""
from __future__ import annotations

import ast
from typing import Optional

from .facts import ModuleFacts

# Methods of a tensor that return Python values or non-tensors.
NON_TENSOR_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "item", "tolist", "numpy", "element_size",
        "data_ptr", "stride", "storage_offset", "is_contiguous", "is_floating_point",
        "is_complex", "get_device", "nelement", "type", "__len__", "untyped_storage",
    }
)
NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names", "T_", "grad_fn"})
# torch.* callables that do not return tensors
NON_TENSOR_TORCH = (
    "torch.is_", "torch.cuda.", "torch.backends.", "torch.get_", "torch.set_", "torch.Size",
    "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo", "torch.jit.", "torch.compiler.",
    "torch._dynamo.", "torch.autograd.", "torch.manual_seed", "torch.no_grad", "torch.enable_grad",
    "torch.inference_mode", "torch.autocast", "torch.amp.", "torch.nn.", "torch.distributed.",
    "torch.Generator", "torch.compile", "torch.load", "torch.save", "torch.numel", "torch.typename",
    "torch.utils.", "torch.testing.", "torch.sym_", "torch.export.", "torch.fx.", "torch.library.",
)
# Methods that only tensors (and numpy arrays) have: the receiver is a tensor.
TENSOR_METHODS = frozenset(
    {
        "sum", "mean", "amax", "amin", "abs", "any", "all", "norm", "std", "var", "clamp",
        "clamp_min", "clamp_max", "sigmoid", "softmax", "exp", "log", "sqrt", "pow", "float",
        "half", "bfloat16", "double", "contiguous", "view", "reshape", "permute", "unsqueeze",
        "squeeze", "flatten", "detach", "argmax", "argmin", "nonzero", "isnan", "isinf", "lerp",
        "masked_fill", "sign", "round", "floor", "ceil", "prod", "cumsum", "matmul", "bmm",
    }
)
TENSOR_TORCH_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.HalfTensor", "torch.BoolTensor"})


def is_torch_tensor_call(dotted: Optional[str]) -> bool:
    if not dotted or not dotted.startswith("torch."):
        return False
    if dotted.startswith(TENSOR_TORCH_NAMESPACES):
        return True
    if dotted.startswith(NON_TENSOR_TORCH):
        return False
    tail = dotted.rsplit(".", 1)[-1]
    return dotted.count(".") == 1 and tail[:1].islower()


class TensorGuess:
    def __init__(self, facts: ModuleFacts, func: ast.AST):
        self.facts = facts
        self.func = func
        self._names: dict[str, bool] = {}
        self._collect()

    def _collect(self) -> None:
        func = self.func
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in func.args.posonlyargs + func.args.args + func.args.kwonlyargs:
                if arg.annotation is not None and self._is_tensor_annotation(arg.annotation):
                    self._names[arg.arg] = True
        body = func.body if isinstance(func.body, list) else [func.body]
        nodes = list(_walk_function(body))  # walked once, read three times
        # a name whose tensor-only methods are called is a tensor (`img.mean(1)`)
        for node in nodes:
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in TENSOR_METHODS
                and isinstance(node.func.value, ast.Name)
                and self.facts.resolve(node.func.value) is None
            ):
                self._names[node.func.value.id] = True
        # two rounds so `b = a * 2` after `a = torch.rand(...)` is seen either way round
        assigns = [node for node in nodes if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
        for _ in range(2):
            for node in assigns:
                if isinstance(node, ast.Assign) and self.is_tensor(node.value):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self._names[target.id] = True
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                    if node.value is not None and self.is_tensor(node.value):
                        self._names[node.target.id] = True

    def _is_tensor_annotation(self, ann: ast.expr) -> bool:
        dotted = self.facts.resolve(ann)
        if dotted in TENSOR_ANNOTATIONS:
            return True
        return isinstance(ann, ast.Constant) and ann.value in ("Tensor", "torch.Tensor")

    def is_tensor(self, expr: ast.AST) -> bool:
        if isinstance(expr, ast.Name):
            return self._names.get(expr.id, False)
        if isinstance(expr, ast.Call):
            func = expr.func
            dotted = self.facts.resolve(func)
            if is_torch_tensor_call(dotted):
                return True
            if isinstance(func, ast.Attribute) and dotted is None:
                if func.attr in NON_TENSOR_METHODS:
                    return False
                return func.attr in TENSOR_METHODS or self.is_tensor(func.value)
            return False
        if isinstance(expr, ast.BinOp):
            return self.is_tensor(expr.left) or self.is_tensor(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and self.is_tensor(expr.operand)
        if isinstance(expr, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
                return False
            return self.is_tensor(expr.left) or any(self.is_tensor(c) for c in expr.comparators)
        if isinstance(expr, ast.Subscript):
            return self.is_tensor(expr.value)
        if isinstance(expr, ast.Attribute):
            if expr.attr in NON_TENSOR_ATTRS:
                return False
            return expr.attr in ("T", "mT", "real", "imag", "data", "grad") and self.is_tensor(expr.value)
        return False


def _walk_function(body):
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
