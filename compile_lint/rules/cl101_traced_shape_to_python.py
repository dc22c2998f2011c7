from __future__ import annotations

import ast

from ..analysis.branches.training import training_only
from ..analysis.modules.classes import every_trace, labelled, self_attr, self_name, site_of_kind
from ..analysis.compiled.values import literal
from ..analysis.tensors.shapes import cast_kind, direct_shape_element, flows_to_sink, shape_names, whole_shape_of
from ..analysis.reach.queries import ClassAttrsFact, class_attrs, stmt_text
from ..analysis.semantic.bindings import BindingsFact, bindings_for
from ..analysis.semantic.facts import RegionsFact
from .base import Case, Rule

# what the tracer does with the Python number (the page says why)
_EFFECT = {
    "torch.fx.symbolic_trace": "symbolic tracing fails on it",
    "torch.export.export": "the export accepts only the traced size",
    "torch.export.export_for_training": "the export accepts only the traced size",
}
_GENERIC = "the trace keeps the traced size"


def _float_fix_is_exact(facts, call: ast.Call) -> bool:
    """Dropping `float()` keeps the value and the type only where the result is
    divided, or combined with a float literal."""
    parent = facts.parent(call)
    if not isinstance(parent, ast.BinOp):
        return False
    if isinstance(parent.op, ast.Div):
        return True
    other = parent.right if parent.left is call else parent.left
    return (
        isinstance(parent.op, (ast.Mult, ast.Add, ast.Sub))
        and isinstance(other, ast.Constant)
        and isinstance(other.value, float)
    )


# true only while torch.jit traces or the ONNX exporter runs
TRACER_TESTS = frozenset({"torch.jit.is_tracing", "torch.onnx.is_in_onnx_export", "torch._C._get_tracing_state"})


def _chosen_for_the_tracer(facts, call) -> bool:
    """The cast is the branch the code takes only under the tracer (`int(c) if
    torch.jit.is_tracing() else c`): the author makes that number a constant of the
    trace on purpose (kornia's filter2d, for an ONNX conv's `groups`)."""
    child = call
    for anc in facts.ancestors(call):
        if isinstance(anc, (ast.If, ast.IfExp)):
            in_body = child in anc.body if isinstance(anc, ast.If) else child is anc.body
            test = anc.test
            if in_body and isinstance(test, ast.Call) and facts.resolve(test.func) in TRACER_TESTS:
                return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        child = anc
    return False


# layers whose weights fix a dimension of their input: the last one (features) or dim 1
# (channels); a size read there is the same number for every input the model takes
FIXES_LAST_DIM = frozenset({"torch.nn.Linear", "torch.nn.LayerNorm", "torch.nn.RMSNorm"})
FIXES_CHANNELS = frozenset({
    f"torch.nn.{name}" for name in (
        "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
        "InstanceNorm3d",
    )
})


def _fixed_by_a_layer(facts, arg: ast.AST, names: set) -> bool:
    """Every size `arg` reads is a dimension a layer of the class fixes: a name unpacked
    from `x.shape` / `x.size()` at the last position when the same `x` goes into a
    `self.<layer>(x)` that is an `nn.Linear` / `nn.LayerNorm`, or at position 1 (of 3 to 5)
    when it goes into a convolution or a channel norm. `B, N, C = x.shape; q = self.q(x)`
    then `int(C // self.num_heads)`: the trace's constant is right for every input
    (CrazyAra's Next-ViT attention, judged false in bench/dev_findings)."""
    reads = [n for n in ast.walk(arg) if isinstance(n, ast.Name) and n.id in names]
    if not reads or any(isinstance(n, (ast.Subscript, ast.Call)) and direct_shape_element(n) for n in ast.walk(arg)):
        return False
    bindings = bindings_for(facts)
    for read in reads:
        bound = bindings.reaching(read)
        if len(bound) != 1 or bound[0].kind != "unpack" or bound[0].index is None:
            return False
        source = bound[0].source
        stmt = bound[0].stmt
        targets = stmt.targets[0].elts if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Tuple) else None
        if targets is None or any(isinstance(t, ast.Starred) for t in targets):
            return False
        tensor = whole_shape_of(source)
        if tensor is None:
            return False
        index, rank = bound[0].index, len(targets)
        wanted = FIXES_LAST_DIM if index == rank - 1 else FIXES_CHANNELS if index == 1 and 3 <= rank <= 5 else None
        if wanted is None or not _fed_to_layer(facts, tensor, wanted, bindings):
            return False
    return True


def _made_by_a_layer(facts, arg: ast.AST) -> bool:
    """`arg` is one size of a layer's output that the layer fixes: `y.size(1)` /
    `y.shape[1]` with `y = self.<conv or channel norm>(...)`, or `y.size(-1)` /
    `y.shape[-1]` with `y = self.<nn.Linear / nn.LayerNorm>(...)`, `y` bound once in its
    function: the channels a convolution writes are its `out_channels` whatever the
    input (ACTalker's pnnx-exported attention, `int(v_112.size(1))` of a 512-channel
    `Conv2d`, judged false in bench/dev_findings)."""
    if not direct_shape_element(arg):
        return False
    if isinstance(arg, ast.Subscript):
        base = arg.value.value if isinstance(arg.value, ast.Attribute) else arg.value.func.value
        index = arg.slice
    else:
        base, index = arg.func.value, arg.args[0]
    position = literal(index)
    wanted = FIXES_CHANNELS if position == 1 else FIXES_LAST_DIM if position == -1 else None
    if wanted is None or not isinstance(base, ast.Name):
        return False
    me = self_name(facts.enclosing_function(arg))
    if me is None:
        return False
    bound = bindings_for(facts).reaching(base)
    if len(bound) != 1 or bound[0].kind != "assign" or bound[0].conditional:
        return False
    return _calls_a_layer(facts, bound[0].value, me, wanted, class_attrs(facts, base))


def _fed_to_layer(facts, tensor: ast.Name, wanted: frozenset, bindings) -> bool:
    """The value `tensor` holds goes, unchanged, into `self.<attr>(...)` as its first
    argument somewhere in the same function, with `self.<attr> = <one of wanted>(...)` the
    only assignment of that attribute in the class."""
    func = facts.enclosing_function(tensor)
    me = self_name(func)
    if me is None:
        return False
    same = {id(b.stmt) for b in bindings.reaching(tensor)}
    attrs = class_attrs(facts, tensor)
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)
                and node.args[0].id == tensor.id):
            continue
        if {id(b.stmt) for b in bindings.reaching(node.args[0])} != same:
            continue  # another value under the same name
        if _calls_a_layer(facts, node, me, wanted, attrs):
            return True
    return False


def _calls_a_layer(facts, node: ast.AST, me: str, wanted: frozenset, attrs: dict) -> bool:
    """`node` is a call `<me>.<attr>(...)`, and every assignment of that attribute in the
    class (`attrs`: class_attrs) makes one of `wanted` (`self.q = nn.Linear(...)`)."""
    attr = self_attr(node.func, me) if isinstance(node, ast.Call) else None
    made = attrs.get(attr, []) if attr is not None else []
    return bool(made) and all(facts.resolve(call.func) in wanted for _, call in made)


def _static_exports_only(region) -> bool:
    """Every trace that reaches the region is an export with no dynamic-shape argument:
    the exported graph takes only the example's sizes, so a size baked into it is the
    right number for every input it accepts (a fixed-resolution export is CL104's
    question, not this rule's)."""
    return every_trace(region, lambda site: site.static_export)


class TracedShapeToPython(Rule):
    """
    ## What it does
    Finds `int()`, `float()`, `math.floor()`/`ceil()`, `.item()` and `.tolist()` of a
    tensor's shape or size (`x.shape[2]`, `x.size(-1)`, `x.size()[2]`, a name bound to
    one, `[int(s) for s in x.shape[-2:]]`, `map(int, x.shape)`) inside a traced region
    (`torch.jit.trace`, `torch.fx.symbolic_trace`, `torch.export.export`,
    `torch.onnx.export`, followed into the code those call, across files), when the
    cast value is used as a size: `size=`, `view`, `reshape`, `expand`, `new_zeros`,
    `torch.zeros`, `F.pad`, `range`, a slice, directly or through local names. Not
    reported: the shape of the module's own parameter or buffer (`self.pos_embed.shape[1]`
    with `self.pos_embed = nn.Parameter(...)` or `register_buffer("pos_embed", ...)`):
    it is fixed when the module is built, so the constant is right in every trace.

    ## Why is this bad?
    While tracing, a size is a traced value. A Python cast turns it into the number
    it had for the example input, and that number is written into the trace:
    - `torch.jit.trace` at 32x32, then run at 48x80: a TracerWarning while tracing,
      then a RuntimeError, or silently the 32x32 result with no error at all;
    - `torch.fx.symbolic_trace`: `int(Proxy)` raises TypeError;
    - `torch.export.export`: `Guard failed: ref.size()[2] == 32`, even with `Dim.AUTO`.

    A size passed on without a cast (`size=ref.shape[-2:]`, `tuple(ref.shape[-2:])`,
    `x.view(b, c, h * w)` with `b, c, h, w = x.shape`) stays symbolic and follows the input.

    ## Example
    ```python
    class Decoder(nn.Module):
        def forward(self, x, skip):
            x = F.interpolate(x, size=(int(skip.shape[2]), int(skip.shape[3])), mode="bilinear")
            return torch.cat([x, skip], 1)

    traced = torch.jit.trace(Decoder(), (low, skip))
    ```

    ## Use instead
    ```python
    class Decoder(nn.Module):
        def forward(self, x, skip):
            x = F.interpolate(x, size=(skip.shape[2], skip.shape[3]), mode="bilinear")
            return torch.cat([x, skip], 1)
    ```

    ## Fix safety
    Safe: the fix drops `int()` when it wraps one size directly (`int(x.shape[2])`,
    `int(x.size(2))`): in eager mode a size already is an `int`, so results, types and
    `state_dict` are unchanged. `float()` is dropped only where the result is divided
    or combined with a float literal, which gives the same float. Casts of arithmetic,
    of names, `.item()` and `.tolist()` are reported without a fix.

    Only casts that reach a size are reported: `float(q.shape[-1]) ** -0.5` used as an
    attention scale is a channel count, constant for a given model. Nor a cast the code
    takes only under the tracer (`int(c) if torch.jit.is_tracing() else c`): the author
    makes that size a constant of the trace on purpose (corpus L: kornia 0.9.0
    `filters/filter.py` does it for the channel count an ONNX convolution needs as its
    `groups`, with a comment saying so; its shape is a valid case). Nor a cast on a
    training-only branch (`if self.training:`, or a method its class calls only there, as
    an MAE's `random_masking`): a trace or export is taken in eval mode, and one taken in
    training mode is CL106's finding. Nor a count a layer of the class fixes: a name
    unpacked from `x.shape` at the last position when `x` also goes into an
    `nn.Linear`/`nn.LayerNorm` attribute (`B, N, C = x.shape; q = self.q(x)`, then
    `int(C // self.num_heads)`), or at position 1 when it goes into a convolution or a
    channel norm: the trace's number is right for every input the model takes (CrazyAra's
    Next-ViT attention, bench/dev47: five findings, four judged false in
    `bench/dev_findings/`). Nor one size of a layer's output that the layer fixes:
    `y.size(1)` / `y.shape[1]` of `y = self.<convolution or channel norm>(...)`, `y.size(-1)`
    of `y = self.<nn.Linear / nn.LayerNorm>(...)` (ACTalker's pnnx-exported attention,
    `int(v_112.size(1))` of a 512-channel `Conv2d`: 8 findings, the one judged false, went
    on the 476 development apps held, 2026-12-06, and none came). On the development apps (`bench/dev_findings/`),
    three face ViTs' `int(L * (1 - mask_ratio))` went, one judged false there; nothing
    else moved on the 476 apps held. Nor a cast in code that only static exports reach
    (`torch.onnx.export` / `torch.export.export` with no `dynamic_axes` /
    `dynamic_shapes`, no `**kwargs`, no positional argument past the file): the exported
    graph takes only the example's sizes, so the baked number is right for every input it
    accepts; whether one resolution is enough is CL104's question. Code that a `jit.trace`
    or a dynamic export also reaches is still reported. On the 476 development apps held
    (`bench/dev_findings/`, 2026-12-06) 26 findings went and none came: HybridNets'
    same-padding (4), the BEVFusion camera and head exports in two repos (12), GFPGAN's
    channel splits (7), sleap-nn's input scaling reached only from a test's export (2),
    Chinese-CLIP (1); the 14 of them judged there were all false. Corpus M's check JSON is
    identical.

    ## References
    - measured on torch 2.13 CPU: jit.trace at 32x32 run at 48x80 fails or returns the
      32x32 result; fx gives `int(Proxy)` TypeError; export fails its guard
      `ref.size()[2] == 32` even with `Dim.AUTO`. `tests/test_verify_hazards.py` runs `compile-lint verify` on `fixtures/verify/` and reproduces it (traced_unet_skip.py)
    - pytorch#36596, pytorch#10654
    - https://pytorch.org/docs/stable/generated/torch.jit.trace.html (TracerWarning)
    """

    needs = (RegionsFact, BindingsFact, ClassAttrsFact)
    code = "CL101"
    name = "traced-shape-to-python"
    summary = "Python cast of a tensor size in a traced region bakes the size into the trace"
    fix_safety = "safe"
    codemod = "codemods.drop_shape_cast:DropShapeCast"
    requires = (b"shape", b"size")

    valid = [
        Case(
            """\
            import torch
            import torch.nn as nn

            class MidAttention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.q = nn.Conv2d(512, 512, 1)
                    self.proj = nn.Linear(512, 64)

                def forward(self, x):
                    q = self.q(x)
                    flat = q.reshape(x.size(0), int(q.size(1)), -1)
                    t = self.proj(flat.transpose(1, 2))
                    return t.view(-1, int(t.shape[-1]))

            traced = torch.jit.trace(MidAttention(), torch.rand(1, 512, 8, 8))
            """,
            note="the channels a convolution writes, the features a Linear writes: the same for every input "
                 "(ACTalker's pnnx-exported attention, bench/dev_findings)",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn

            class Attention(nn.Module):
                def __init__(self, dim, heads):
                    super().__init__()
                    self.num_heads = heads
                    self.q = nn.Linear(dim, dim)

                def forward(self, x):
                    B, N, C = x.shape
                    q = self.q(x)
                    return q.reshape(B, N, self.num_heads, int(C // self.num_heads))

            traced = torch.jit.trace(Attention(8, 2), torch.rand(1, 4, 8))
            """,
            note="the feature count a Linear fixes (CrazyAra's Next-ViT attention, bench/dev_findings): "
                 "the same number for every input",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn

            class ViT(nn.Module):
                def __init__(self, mask_ratio=0.1):
                    super().__init__()
                    self.mask_ratio = mask_ratio
                    self.proj = nn.Linear(16, 16)

                def random_masking(self, x, mask_ratio):
                    N, L, D = x.shape
                    len_keep = int(L * (1 - mask_ratio))
                    ids_keep = torch.argsort(torch.rand(N, L), dim=1)[:, :len_keep]
                    return torch.gather(x, 1, ids_keep.unsqueeze(-1).repeat(1, 1, D))

                def forward(self, x):
                    x = self.proj(x)
                    if self.training and self.mask_ratio > 0:
                        x = self.random_masking(x, self.mask_ratio)
                    return x

            traced = torch.jit.trace(ViT().eval(), torch.rand(1, 4, 16))
            """,
            note="a helper the class calls only in training mode (an MAE's random_masking: three "
                 "development apps' face ViTs, bench/dev_findings): no trace for inference records it",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F

            def blur(x, kernel):
                b, c, h, w = x.shape
                k = kernel.expand(-1, int(c) if torch.jit.is_tracing() else c, -1, -1)
                return F.conv2d(x, k, groups=c)

            traced = torch.jit.trace(blur, (torch.rand(1, 3, 8, 8), torch.rand(1, 1, 3, 3)))
            """,
            note="a constant chosen for the tracer on purpose (kornia filter2d)",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class PosEmbed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.table = nn.Parameter(torch.zeros(1, 257, 64))

                def forward(self, x):
                    n = self.table.shape[1] - 1
                    side = n ** 0.5
                    grid = self.table[:, 1:].reshape(1, int(side), int(side), 64).permute(0, 3, 1, 2)
                    return x + F.interpolate(grid, size=x.shape[-2:]).flatten(2).transpose(1, 2)

            traced = torch.jit.trace(PosEmbed(), torch.rand(1, 16, 16))
            """,
            note="the shape of the module's own parameter is the same in every trace (Depth-Anything pos_embed)",
        ),
        Case(
            """\
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])))
            """,
            note="not traced: eager code may cast",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=ref.shape[-2:], mode="bilinear")
            traced = torch.jit.trace(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))
            """,
            note="the size stays traced",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                h, w = ref.shape[-2:]
                y = F.interpolate(x, size=tuple(ref.shape[-2:]))
                return y.view(y.shape[0], -1, h * w)
            traced = torch.jit.trace(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))
            """,
            note="tuple() and arithmetic on sizes stay traced",
        ),
        Case(
            """\
            import torch
            from torch import nn
            class Attention(nn.Module):
                def forward(self, q, k):
                    scale = float(q.shape[-1]) ** -0.5
                    return (q @ k.transpose(-2, -1)) * scale
            exported = torch.jit.trace(Attention(), (torch.rand(1, 4, 8), torch.rand(1, 4, 8)))
            """,
            note="a cast that never reaches a size: a channel count used as a scale",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            @torch.compile
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])))
            """,
            note="compiled, not traced: Dynamo handles int() of a size (CL508's business)",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])))
            scripted = torch.jit.script(up)
            """,
            note="torch.jit.script compiles the int() call, it does not bake it",
        ),
        Case(
            """\
            import torch
            from torch.jit import script

            @script
            def half_flow(image):
                return torch.zeros(image.size(0), 2, int(image.size(2) / 2), int(image.size(3) / 2))

            def flow(x):
                return half_flow(x) + 1

            traced = torch.jit.trace(flow, torch.rand(1, 3, 8, 8))
            """,
            note="a scripted def a trace calls is TorchScript, not traced: its int() follows the size "
                 "(TOFlow's half_flow under an ONNX export, judged false in bench/fresh_reads batch 25)",
        ),
        Case(
            """\
            import torch
            def head(x, n: int):
                return x.view(int(n), -1)
            traced = torch.jit.trace(head, (torch.rand(4, 4), 2))
            """,
            note="int() of something that is not a size",
        ),
        Case(
            """\
            import torch
            def flatten_hw(x):
                hw = torch.tensor(x.shape[-2:]).prod().item()
                return x.new_zeros(x.shape[0], hw)
            torch.onnx.export(flatten_hw, (torch.rand(1, 3, 8, 8),), "m.onnx")
            """,
            note="a static export (no dynamic_axes) takes only the example's sizes: the baked "
                 "number is right for every input it accepts (HybridNets, BEVFusion: bench/dev_findings)",
        ),
        Case(
            """\
            import torch
            from torch import nn
            import torch.nn.functional as F
            class Decoder(nn.Module):
                def forward(self, x, skip):
                    return F.interpolate(x, size=(int(skip.shape[2]), int(skip.shape[3])))
            model = Decoder().eval()
            ex = torch.export.export(model, (torch.rand(1, 8, 16, 16), torch.rand(1, 8, 32, 32)))
            """,
            note="torch.export without dynamic_shapes: every size is a constant of the program anyway",
        ),
    ]
    invalid = [
        Case(
            """\
            import torch
            import torch.nn as nn

            class MidAttention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.q = nn.Conv2d(512, 512, 1)

                def forward(self, x):
                    q = self.q(x)
                    return q.reshape(1, 512, int(q.size(2) * q.size(3)))

            traced = torch.jit.trace(MidAttention(), torch.rand(1, 512, 8, 8))
            """,
            at=[(11, 34)], note="the spatial size of a convolution's output follows the input",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn

            class Tokens(nn.Module):
                def __init__(self, dim):
                    super().__init__()
                    self.q = nn.Linear(dim, dim)

                def forward(self, x):
                    B, N, C = x.shape
                    q = self.q(x)
                    side = int(N ** 0.5)
                    return q.reshape(B, side, side, C)

            traced = torch.jit.trace(Tokens(8), torch.rand(1, 4, 8))
            """,
            at=[(12, 16)], note="the token count, unlike the feature count the Linear fixes, follows the input",
        ),
        Case(
            """\
            import torch
            import torch.nn as nn

            class ViT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(16, 16)

                def keep(self, x, ratio):
                    N, L, D = x.shape
                    return x[:, :int(L * (1 - ratio))]

                def forward(self, x):
                    x = self.proj(x)
                    if self.training:
                        x = self.keep(x, 0.5)
                    return self.keep(x, 0.25)

            traced = torch.jit.trace(ViT().eval(), torch.rand(1, 4, 16))
            """,
            at=[(11, 22)], note="the helper also runs in eval mode: the trace records its cast",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])), mode="bilinear")
            traced = torch.jit.trace(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))
            """,
            fixed="""\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(ref.shape[2], ref.shape[3]), mode="bilinear")
            traced = torch.jit.trace(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)))
            """,
            at=[(4, 35), (4, 54)],
        ),
        Case(
            """\
            import torch as T
            from torch import nn
            from torch.nn import functional
            class Decoder(nn.Module):
                def forward(self, x, skip):
                    b, c = x.size()[0], x.size()[1]
                    h = int(skip.size()[2])
                    w = int(skip.size(3))
                    x = functional.interpolate(x, size=(h, w))
                    return x.reshape(b, c, h, w)
            model = Decoder().eval()
            DYNAMIC = ({2: T.export.Dim.AUTO, 3: T.export.Dim.AUTO},) * 2
            ex = T.export.export(model, (T.rand(1, 8, 16, 16), T.rand(1, 8, 32, 32)), dynamic_shapes=DYNAMIC)
            """,
            fixed="""\
            import torch as T
            from torch import nn
            from torch.nn import functional
            class Decoder(nn.Module):
                def forward(self, x, skip):
                    b, c = x.size()[0], x.size()[1]
                    h = skip.size()[2]
                    w = skip.size(3)
                    x = functional.interpolate(x, size=(h, w))
                    return x.reshape(b, c, h, w)
            model = Decoder().eval()
            DYNAMIC = ({2: T.export.Dim.AUTO, 3: T.export.Dim.AUTO},) * 2
            ex = T.export.export(model, (T.rand(1, 8, 16, 16), T.rand(1, 8, 32, 32)), dynamic_shapes=DYNAMIC)
            """,
            at=[(7, 13), (8, 13)],
            note="aliases, x.size()[i], flow through names, export with dynamic shapes",
        ),
        Case(
            """\
            import math
            import torch
            import torch.fx
            from torch import nn
            class Upscale(nn.Module):
                def forward(self, x):
                    size = [int(s * 1.5) for s in x.shape[-2:]]
                    pad = math.floor(x.shape[-1] / 8)
                    y = nn.functional.interpolate(x, size=size)
                    return nn.functional.pad(y, (0, pad))
            gm = torch.fx.symbolic_trace(Upscale())
            """,
            at=[(7, 17), (8, 15)],
            note="comprehension over x.shape, math.floor; no fix for casts of arithmetic",
        ),
        Case(
            """\
            import torch
            def flatten_hw(x):
                hw = torch.tensor(x.shape[-2:]).prod().item()
                return x.new_zeros(x.shape[0], hw)
            torch.onnx.export(flatten_hw, (torch.rand(1, 3, 8, 8),), "m.onnx", input_names=["x"],
                              dynamic_axes={"x": {2: "h", 3: "w"}})
            """,
            at=[(3, 10)],
            note=".item() of a tensor built from sizes, onnx.export with dynamic axes",
        ),
        Case(
            """\
            import torch
            def crop(x, ref):
                top = float(x.size(2)) / 2 - ref.shape[2] / 2
                return x[:, :, int(top):, :]
            t = torch.jit.trace(crop, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 4, 4)))
            """,
            fixed="""\
            import torch
            def crop(x, ref):
                top = x.size(2) / 2 - ref.shape[2] / 2
                return x[:, :, int(top):, :]
            t = torch.jit.trace(crop, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 4, 4)))
            """,
            at=[(3, 11), (4, 20)],
            note="float() dropped where the value is divided; int(top) stays, without a fix",
        ),
        Case(
            """\
            import torch.nn as nn
            import torch.nn.functional as F
            class Fuse(nn.Module):
                def forward(self, low, high):
                    low = F.interpolate(low, size=[int(v) for v in high.shape[2:]])
                    return low + high
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fuse = Fuse()
                def forward(self, a, b):
                    return self.fuse(a, b)
            """,
            files={
                "pkg/__init__.py": "",
                "pkg/export.py": (
                    "import torch\n"
                    "from pkg.blocks import Net\n"
                    "net = Net().eval()\n"
                    "traced = torch.jit.trace(net, (torch.rand(1, 8, 8, 8), torch.rand(1, 8, 16, 16)))\n"
                ),
            },
            path="pkg/blocks.py",
            at=[(5, 40)],
            note="cross-file: a submodule's forward, traced from another file",
        ),
        Case(
            """\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])))
            example = (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16))
            torch.onnx.export(up, example, "up.onnx")
            traced = torch.jit.trace(up, example)
            """,
            fixed="""\
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(ref.shape[2], ref.shape[3]))
            example = (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16))
            torch.onnx.export(up, example, "up.onnx")
            traced = torch.jit.trace(up, example)
            """,
            at=[(4, 35), (4, 54)],
            note="a static export and a jit trace of one function: the trace runs at any size",
        ),
        Case(
            """\
            import functools
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(int(ref.shape[2]), int(ref.shape[3])))
            export = functools.partial(torch.onnx.export, input_names=["x", "ref"], dynamic_axes={"ref": {2: "h", 3: "w"}})
            export(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)), "up.onnx")
            """,
            fixed="""\
            import functools
            import torch
            import torch.nn.functional as F
            def up(x, ref):
                return F.interpolate(x, size=(ref.shape[2], ref.shape[3]))
            export = functools.partial(torch.onnx.export, input_names=["x", "ref"], dynamic_axes={"ref": {2: "h", 3: "w"}})
            export(up, (torch.rand(1, 3, 8, 8), torch.rand(1, 3, 16, 16)), "up.onnx")
            """,
            at=[(5, 35), (5, 54)],
            note="dynamic axes bound by a partial of the exporter: not a static export",
        ),
    ]

    # statement-local: a cast is judged in its function (shape names, sinks, the
    # tracer test around it), its class (the module's parameters and buffers), the
    # names table and the region index; "outermost cast only" looks at its ancestors
    local = True

    def check(self, facts):
        if not facts.has_region("traced"):
            return
        reported: set[int] = set()
        names_cache: dict[int, set[str]] = {}
        for call in facts.primary(ast.Call):
            func = facts.enclosing_function(call)
            if func is None:
                continue
            region = facts.in_region(call, "traced")
            if region is None or _static_exports_only(region):
                continue
            key = id(func)
            if key not in names_cache:
                names_cache[key] = shape_names(facts, func)
            kind = cast_kind(facts, call, names_cache[key])
            if kind is None:
                continue
            # report the outermost cast only: int(float(h) * 1.5) is one finding
            if any(id(anc) in reported for anc in facts.ancestors(call)):
                continue
            outer = [a for a in facts.ancestors(call) if isinstance(a, ast.Call) and cast_kind(facts, a, names_cache[key])]
            if outer:
                continue
            if _chosen_for_the_tracer(facts, call) or training_only(facts, call):
                continue  # a constant on purpose, or a training-only branch no trace records
            if call.args and (_fixed_by_a_layer(facts, call.args[0], names_cache[key])
                              or _made_by_a_layer(facts, call.args[0])):
                continue  # a feature or channel count the model's layers fix
            sink = flows_to_sink(facts, call, func)
            if sink is None:
                continue
            reported.add(id(call))
            yield self._finding(facts, call, kind, sink, region)

    def _finding(self, facts, call, kind, sink, region):
        site = site_of_kind(region, "traced")
        effect = _EFFECT.get(site.api if site else "", _GENERIC)
        what = stmt_text(facts, call, 40)
        sink_text = f"`{stmt_text(facts, sink.func, 30)}`" if isinstance(sink, ast.Call) else "an index"
        arg = call.args[0] if call.args else None
        direct = kind in ("int", "float") and arg is not None and direct_shape_element(arg)
        keep = facts.text(arg) if direct else "the size itself (`x.shape[2]`, `x.shape[-2:]`)"
        message = f"`{what}` makes a traced size a Python number for {sink_text}: {effect}"
        fixable = direct and (kind == "int" or _float_fix_is_exact(facts, call))
        if fixable:
            return self.finding(
                facts, call, message, fix=f"drop `{kind}()` around `{keep}`",
                data={"cast": facts.text(call.func)}, region=labelled(region, "traced"),
            )
        return self.finding(facts, call, message, region=labelled(region, "traced"))
