from __future__ import annotations

from textwrap import dedent

from ..analysis.compiled.values import CompiledValuesFact
from ..analysis.compiled.output_lifetimes import MayCallCudagraphsFact, OutputLifetimesFact
from ..analysis.reach.queries import stmt_text
from .base import Case, Rule


class CudagraphOutputRetained(Rule):
    """
    ## What it does
    Finds outputs of a CUDA-graph compiled callable (`torch.compile` with
    `mode="reduce-overhead"`, `mode="max-autotune"` or
    `options={"triton.cudagraphs": True}`, also through `model.compile(...)`, a
    decorator, a project wrapper or an import) that are kept past the next call of
    such a callable without a copy:

    - appended or stored into a container (`outs.append(model(x))`,
      `cache[k] = y`, `outs += [y]`) in a loop, in a non-local container, or with a
      later call;
    - stored on `self`, on another object or in a global (`self.last = model(x)`);
    - read after another call (`a = model(x1); b = model(x2); a + b`, a value carried
      to the next loop iteration, `torch.cat([model(a), model(b)])`,
      `[model(x) for x in batch]`).

    Views (`out[0]`, `.sample`, `.view(...)`, `.detach()`, `.to(...)`) count as the
    output; `.clone()`, `.cpu()`, `.item()`, `.numpy()` and any arithmetic make a new
    tensor and end the hazard, and so does an item store into a tensor (`toks[:, :i] =
    step(x)[:, :i]`, an index of several dimensions with a slice or `...`): it copies the
    values (WhisperSpeech's decoding loops, bench/dev8: three findings, judged false in
    `bench/dev_findings/`). A list's or dict's item store keeps the output and is
    reported. A function of the file that returns such an output is
    treated like the compiled callable itself. In a file that calls
    `torch.compiler.cudagraph_mark_step_begin()`, the next call means the next marked
    step: outputs of several calls in one step stay valid.

    ## Why is this bad?
    CUDA graphs replay into static memory shared by every CUDA-graph compiled callable
    of the process (cudagraph trees, `torch/_inductor/cudagraph_trees.py`). When a new
    *generation* starts, the outputs of the previous one are freed for reuse, and a
    later read raises `RuntimeError: Error: accessing tensor output of CUDAGraphs that
    has been overwritten by a subsequent run`. On CPU no CUDA graphs are used, so tests
    pass and the error appears on the GPU.

    What starts a generation (torch 2.13, `CUDAGraphTreeManager.get_curr_generation`,
    `can_start_new_generation`, `try_end_curr_recording` ->
    `dealloc_current_path_weakrefs`): without `torch.compiler.cudagraph_mark_step_begin()`
    in the program, every call of a compiled callable from eager code (inference, or
    after the backward), so two *different* compiled modules called in a row count too;
    once the program calls `cudagraph_mark_step_begin()`, only the next such call. Within
    one generation, a call made while earlier outputs are alive is recorded as a child
    node that does not reuse their memory. So the rule counts compiled calls as the
    clock, except in a file that calls `cudagraph_mark_step_begin()`, where only those
    calls count (`compile_lint/analysis/compiled/output_lifetimes.py` holds the analysis).

    Judged on real code (`bench/judged/verdicts.jsonl`, `bench/apps/judged_region_findings.toml`;
    reasoned from the torch source above, not run on a GPU): LivePortrait's `warp_decode`
    marks a step, then calls a compiled warping module and a compiled decoder and
    returns the first one's outputs. That finding was false (one generation); the rule
    is quiet on it since it follows marked steps (the valid case "two compiled modules
    in one marked step" has its shape).

    Measured on a GPU (scripts/gpu_verify.sh; bench/results.md, "GPU run"): on an
    NVIDIA H200 with torch 2.11.0+cu130, the output `fixtures/verify/cuda_preview_history.py`
    keeps changed by 0.488 when the next call replayed, and reading it raised no error:
    the kept frame silently held the next one's values.

    ## Example
    ```python
    model = torch.compile(model, mode="reduce-overhead")
    outs = []
    for frame in frames:
        outs.append(model(frame))
    ```

    ## Use instead
    ```python
    outs = []
    for frame in frames:
        outs.append(model(frame).clone())
    ```

    ## Fix safety
    Safe: `.clone()` where the output is kept gives the same values (the ones the
    author expected to keep) and changes no signature. Not offered when the kept value
    may be a tuple, list or dict (an unpacked or tuple-returning call).

    ## References
    - `torch/_inductor/cudagraph_trees.py`: "accessing tensor output of CUDAGraphs that has
      been overwritten by a subsequent run" (CUDA only; `fixtures/verify/cuda_preview_history.py`
      is the GPU check, reported "not checkable" on CPU)
    - pytorch#144386, pytorch#170604, pytorch#104435
    - PyTorch docs, "CUDAGraph Trees" (outputs are overwritten by the next run)
    """

    code = "CL401"
    name = "cudagraph-output-retained"
    summary = "Output of a CUDA-graph compiled call kept past the next call is overwritten"
    fix_safety = "safe"
    codemod = "codemods.clone_cudagraph_output:CloneCudagraphOutput"
    requires = ()  # a compiled callable may be imported from another file
    needs = (CompiledValuesFact, MayCallCudagraphsFact, OutputLifetimesFact)  # call sites of compiled callables; no region index needed

    valid = [
        Case(
            """
            import torch
            step = torch.compile(decode_one, mode="reduce-overhead")
            toks = torch.zeros(1, 8, 64, dtype=torch.long)
            for i in range(1, 64):
                toks[:, :i, i:i + 1] = step(toks[:, :, i - 1:i])[:, :i]
            """,
            note="an item store into a tensor copies the values (WhisperSpeech's decoding loops, "
                 "bench/dev8, judged false in bench/dev_findings)",
        ),
        Case(
            """
            import torch
            step = torch.compile(model, mode="reduce-overhead")
            x = noise
            for t in timesteps:
                x = step(x, t)
            a = step(x, 0)
            loss = crit(a, target)
            b = step(noise, 1)
            """,
            note="an output fed to the next call, then replaced; `a` consumed before the next call",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame).clone())
            """,
            note="cloned before keeping",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="max-autotune-no-cudagraphs")
            outs = [model(f) for f in frames]
            """,
            note="no CUDA graphs",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            for frame in frames:
                out = model(frame)
                save_image(out, "x.png")
                losses.append(out.mean().item())
            """,
            note="used before the next call; a Python number kept",
        ),
        Case(
            """
            import torch
            model = torch.compile(model)
            outs = [model(f) for f in frames]
            """,
            note="default mode: no CUDA graphs",
        ),
        Case(
            """
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, mode="reduce-overhead")

                def step(self, x):
                    y = self.net(x)
                    self.preview = y.detach().cpu()
                    self.score = (y * 2).sum()
                    return y
            """,
            note="copies kept, the output returned",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = model(frame)
                if prev is not None:
                    flow(prev, out)
                prev = out.clone()
            """,
            note="carried to the next iteration as a clone",
        ),
        Case(
            """
            import torch

            class Animator:
                def __init__(self, warp, decoder):
                    self.warp = torch.compile(warp, mode="max-autotune")
                    self.decoder = torch.compile(decoder, mode="max-autotune")

                def step(self, feature, keypoints):
                    torch.compiler.cudagraph_mark_step_begin()
                    out = self.warp(feature, keypoints)
                    out["image"] = self.decoder(out["warped"])
                    return out
            """,
            note="two compiled modules in one marked step: both outputs live until the next cudagraph_mark_step_begin()",
        ),
        Case(
            """
            import torch
            warp = torch.compile(warp, mode="reduce-overhead")
            decoder = torch.compile(decoder, mode="reduce-overhead")

            def step(feature, keypoints):
                out = warp(feature, keypoints)
                return decoder(out["warped"])
            """,
            note="the first output is read by the second call, before it runs, and never after",
        ),
    ]
    invalid = [
        Case(
            """
            import torch
            step = torch.compile(decode_one, mode="reduce-overhead")
            outs = [None] * 4
            for i in range(4):
                outs[i] = step(x)
            """,
            fixed="""
            import torch
            step = torch.compile(decode_one, mode="reduce-overhead")
            outs = [None] * 4
            for i in range(4):
                outs[i] = step(x).clone()
            """,
            at=[(6, 15)], note="a list's item store keeps the output itself",
        ),
        Case(
            """
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model
                    self.model.image_encoder = torch.compile(self.model.image_encoder, mode="reduce-overhead")

                def set_image(self, img):
                    self.features = self.model.image_encoder(img)

                def predict(self, points):
                    return self.model.decoder(self.features, points)
            """,
            fixed="""
            import torch

            class Predictor:
                def __init__(self, model):
                    self.model = model
                    self.model.image_encoder = torch.compile(self.model.image_encoder, mode="reduce-overhead")

                def set_image(self, img):
                    self.features = self.model.image_encoder(img).clone()

                def predict(self, points):
                    return self.model.decoder(self.features, points)
            """,
            at=[(10, 25)], note="kept across methods of a predictor: the next set_image overwrites the features predict reads",
        ),
        Case(
            """
            import torch

            def train_step(model, x, y):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss

            step = torch.compile(train_step, mode="reduce-overhead")
            losses = [step(net, x, y) for x, y in loader]
            print(torch.stack(losses).mean())
            """,
            at=[(10, 11)],
            fixed="""
            import torch

            def train_step(model, x, y):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss

            step = torch.compile(train_step, mode="reduce-overhead")
            losses = [step(net, x, y).clone() for x, y in loader]
            print(torch.stack(losses).mean())
            """,
            note="losses of a compiled train step collected for logging",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame))
            """,
            at=[(6, 17)],
            fixed="""
            import torch
            model = torch.compile(model, mode="reduce-overhead")
            outs = []
            for frame in frames:
                outs.append(model(frame).clone())
            """,
        ),
        Case(
            """
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, options={"triton.cudagraphs": True})

                def step(self, x):
                    y = self.net(x)
                    self.last = y
                    return y
            """,
            at=[(10, 21)],
            fixed="""
            import torch

            class Runner:
                def __init__(self, net):
                    self.net = torch.compile(net, options={"triton.cudagraphs": True})

                def step(self, x):
                    y = self.net(x)
                    self.last = y.clone()
                    return y
            """,
        ),
        Case(
            """
            import torch

            @torch.compile(mode="max-autotune")
            def upscale(x):
                return x.repeat_interleave(2, -1)

            a = upscale(left)
            b = upscale(right)
            stereo = torch.cat([a, b], -1)
            """,
            at=[(8, 5)],
            fixed="""
            import torch

            @torch.compile(mode="max-autotune")
            def upscale(x):
                return x.repeat_interleave(2, -1)

            a = upscale(left).clone()
            b = upscale(right)
            stereo = torch.cat([a, b], -1)
            """,
            note="read after another call",
        ),
        Case(
            """
            import torch
            fast = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = fast(frame).sample
                if prev is not None:
                    flow(prev, out)
                prev = out
            """,
            at=[(9, 12)],
            fixed="""
            import torch
            fast = torch.compile(model, mode="reduce-overhead")
            prev = None
            for frame in frames:
                out = fast(frame).sample
                if prev is not None:
                    flow(prev, out)
                prev = out.clone()
            """,
            note="carried to the next loop iteration",
        ),
        Case(
            """
            import torch
            unet = torch.compile(unet, mode="reduce-overhead")
            both = torch.cat([unet(cond), unet(uncond)])
            frames = torch.stack([unet(z) for z in latents])
            """,
            at=[(4, 19), (5, 23)],
            fixed="""
            import torch
            unet = torch.compile(unet, mode="reduce-overhead")
            both = torch.cat([unet(cond).clone(), unet(uncond)])
            frames = torch.stack([unet(z).clone() for z in latents])
            """,
            note="two calls in one expression; a comprehension",
        ),
        Case(
            """
            import torch

            def run(model, x):
                with torch.no_grad():
                    return model(x)

            net = torch.compile(net, mode="reduce-overhead")
            history = {}
            for i, x in enumerate(xs):
                history[i] = run(net, x)
            """,
            note="through a wrapper that returns the output; no fix needed? (fix applies)",
            fixed="""
            import torch

            def run(model, x):
                with torch.no_grad():
                    return model(x)

            net = torch.compile(net, mode="reduce-overhead")
            history = {}
            for i, x in enumerate(xs):
                history[i] = run(net, x).clone()
            """,
            at=[(11, 18)],
        ),
        Case(
            files={
                "engine.py": dedent("""
                    import torch
                    from blocks import Decoder

                    decoder = torch.compile(Decoder(), mode="reduce-overhead")
                """),
            },
            path="serve.py",
            code="""
            from engine import decoder

            cache = []

            def handle(z):
                img = decoder(z)
                cache.append(img)
                return img
            """,
            at=[(8, 18)],
            fixed="""
            from engine import decoder

            cache = []

            def handle(z):
                img = decoder(z)
                cache.append(img.clone())
                return img
            """,
            note="cross-file: compiled in engine.py, a global list in serve.py",
        ),
        Case(
            """
            import torch
            warp = torch.compile(warp, mode="reduce-overhead")
            decoder = torch.compile(decoder, mode="reduce-overhead")

            def step(feature, keypoints):
                out = warp(feature, keypoints)
                image = decoder(out["warped"])
                return out["flow"], image
            """,
            at=[(7, 11)],
            fixed="""
            import torch
            warp = torch.compile(warp, mode="reduce-overhead")
            decoder = torch.compile(decoder, mode="reduce-overhead")

            def step(feature, keypoints):
                out = warp(feature, keypoints).clone()
                image = decoder(out["warped"])
                return out["flow"], image
            """,
            note="steps not marked: calling another compiled module starts a new generation and frees `out`",
        ),
        Case(
            """
            import torch
            model = torch.compile(model, mode="reduce-overhead")

            def render(frames):
                outs = []
                for frame in frames:
                    torch.compiler.cudagraph_mark_step_begin()
                    outs.append(model(frame))
                return outs
            """,
            at=[(9, 21)],
            fixed="""
            import torch
            model = torch.compile(model, mode="reduce-overhead")

            def render(frames):
                outs = []
                for frame in frames:
                    torch.compiler.cudagraph_mark_step_begin()
                    outs.append(model(frame).clone())
                return outs
            """,
            note="a marked step per frame: each mark frees the outputs kept from the frame before",
        ),
    ]

    def check(self, facts):
        for kept in facts.get(OutputLifetimesFact):
            callee = stmt_text(facts, kept.call.func, 30)
            message = (
                f"`{stmt_text(facts, kept.node, 40)}`, output of CUDA-graph compiled `{callee}`, is {kept.how}: "
                "the next replay overwrites it"
            )
            region = kept.compile_call.region()
            if kept.maybe_container:
                yield self.finding(facts, kept.node, message, region=region)
                continue
            start, end = facts.source.node_range(kept.node)
            yield self.finding(
                facts, kept.node, message, region=region,
                fix="add `.clone()` where the output is kept",
                data={"wrap": [[start.row, start.column, end.row, end.column]], "suffix": ".clone()"},
            )
