"""ComfyUI's node graph as the callers of a custom node's method.

A ComfyUI custom node is a class that names its entry method in `FUNCTION`, its inputs
in the dict its classmethod `INPUT_TYPES` returns (`{"required": {"model":
("WANVIDEOMODEL", {...}), "steps": ("INT", {...})}}`) and its outputs in `RETURN_TYPES`
(`("WANVIDEOMODEL",)`). ComfyUI, not the project, calls the method: with each input an
output of another node whose `RETURN_TYPES` has the same type string at that position
(what the method returns is a tuple, one element per output). So a parameter of a node's
method that no call of the project passes holds, for a type some node of the project
returns, element i of what each such node's method returns. A loader node builds the
model and a compile or sampler node receives it (kijai's ComfyUI wrappers, bench/dev34).

What is not followed: ComfyUI's own nodes (a core type such as `MODEL` may come from
them: the value is partial, with that reason), other packs that return the same type,
the "any" type `*`, and nodes written against ComfyUI's newer `io.ComfyNode` schema.
"""
from __future__ import annotations

import weakref
from typing import Optional

from .values import UNKNOWN, Value, _Env

# type strings of ComfyUI's own node outputs (comfy/nodes.py, comfy_extras): an input of
# one of these may be fed by ComfyUI's loaders, not only by the project's nodes
CORE_TYPES = frozenset({
    "MODEL", "CLIP", "VAE", "CONDITIONING", "LATENT", "IMAGE", "MASK", "CONTROL_NET", "CLIP_VISION",
    "CLIP_VISION_OUTPUT", "STYLE_MODEL", "GLIGEN", "UPSCALE_MODEL", "SAMPLER", "SIGMAS", "NOISE", "GUIDER",
    "AUDIO", "VIDEO", "PHOTOMAKER", "HOOKS", "WEBCAM",
})
# widget types: a number, a string or a flag the user types in, never another node's output
WIDGET_TYPES = frozenset({"INT", "FLOAT", "STRING", "BOOLEAN", "COMBO"})
# where the entry method of a node class is named, and where its outputs are
FUNCTION, RETURN_TYPES, INPUT_TYPES = "FUNCTION", "RETURN_TYPES", "INPUT_TYPES"
INPUT_SECTIONS = frozenset({"required", "optional"})


class NodeGraph:
    """The project's ComfyUI nodes, asked through a `values.Resolver` (which owns one):
    which node outputs can feed a node method's parameter."""

    def __init__(self, resolver):
        # the resolver owns its graph: a weak link back, so that a resolver (one per file's
        # index in pass 1) is freed without the cyclic GC, which the workers keep off
        self.resolver = weakref.proxy(resolver)
        self._outputs: Optional[dict] = None  # type string -> [(class dotted, method, position)]

    def entry_method(self, cls_dotted: str, depth) -> Optional[str]:
        """The method a node class names in `FUNCTION` (its own or inherited); None for a
        class that is no node (no string `FUNCTION`, or no `RETURN_TYPES`/`INPUT_TYPES`)."""
        index = self.resolver.index
        if not any(FUNCTION in self._own_attrs(c) for c in index.mro(cls_dotted)):
            return None
        named = {v.dotted for v in self.resolver._attr(Value("class", cls_dotted), FUNCTION, depth) if v.kind == "const"}
        if len(named) != 1:
            return None
        has_io = any(RETURN_TYPES in self._own_attrs(c) for c in index.mro(cls_dotted)) \
            or index.find_def(f"{cls_dotted}.{INPUT_TYPES}", None) is not None
        return next(iter(named)) if has_io else None

    def fed(self, summary, qualname: str, name: str, depth) -> Optional[frozenset]:
        """What ComfyUI can pass as parameter `name` of method `qualname` of `summary`'s
        module, when that method is a node's entry method and `name` one of its inputs of
        a type that is no widget: the outputs of that type of the project's nodes (and an
        unknown where ComfyUI's own nodes return the type too). None otherwise."""
        cls, _, method = qualname.rpartition(".")
        if not cls or "." in cls:
            return None
        cls_dotted = summary.dotted(cls)
        if self.entry_method(cls_dotted, depth) != method:
            return None
        types = self.input_types(cls_dotted, name, depth)
        if not types or types & WIDGET_TYPES or "*" in types:
            return None
        resolver = self.resolver
        out: set = set()
        for type_name in sorted(types):
            for producer, entry, position in self.outputs(depth).get(type_name, ()):
                out |= self._output(producer, entry, position, depth)
            if type_name in CORE_TYPES:
                why = f"`{name}` of `{qualname}()` is a ComfyUI `{type_name}` input: ComfyUI's own nodes may give it"
                resolver.why.append(why)
                out.add(Value(UNKNOWN, why))
        if not out:
            why = f"`{name}` of `{qualname}()` is a ComfyUI `{sorted(types)[0]}` input that no node of the project returns"
            resolver.why.append(why)
            out.add(Value(UNKNOWN, why))
        return frozenset(out)

    def input_types(self, cls_dotted: str, name: str, depth) -> frozenset:
        """The type strings `INPUT_TYPES()` gives input `name` of the node class (the first
        element of its `("TYPE", {...})` spec under "required" or "optional")."""
        resolver = self.resolver
        types: set = set()
        for spec_dict in self._returned(cls_dotted, INPUT_TYPES, depth, bound=False):
            for section in resolver._elements(spec_dict, INPUT_SECTIONS):
                for spec in resolver._elements(section, frozenset({name})):
                    if spec.kind != "seq" or not spec.ordered or not spec.elems:
                        continue
                    types |= {v.dotted for v in spec.elems[0] if v.kind == "const"}
        return frozenset(types)

    def outputs(self, depth) -> dict:
        """type string -> (node class, its entry method, position) of every output of the
        project's node classes (a class with a `FUNCTION` and a `RETURN_TYPES` tuple of
        strings, its own or inherited)."""
        if self._outputs is None:
            index, resolver = self.resolver.index, self.resolver
            declaring = {cls for summary in index.summaries for cls, attrs in summary.attrs.items()
                         if FUNCTION in attrs or RETURN_TYPES in attrs}
            outputs: dict = {}
            classes: set = set()
            for cls in declaring:  # and their subclasses, which inherit what they declare
                classes.update(index.classes_admitted({cls}))
            for cls in sorted(classes):
                entry = self.entry_method(cls, depth)
                if entry is None:
                    continue
                for returned in resolver._attr(Value("class", cls), RETURN_TYPES, depth):
                    if returned.kind != "seq" or not returned.ordered:
                        continue
                    for position, elem in enumerate(returned.elems):
                        for v in elem:
                            if v.kind == "const":
                                outputs.setdefault(v.dotted, []).append((cls, entry, position))
            self._outputs = {t: sorted(set(found)) for t, found in outputs.items()}
        return self._outputs

    def _output(self, cls_dotted: str, entry: str, position: int, depth) -> set:
        """Element `position` of what node class `cls_dotted`'s entry method returns (a
        tuple, or a dict whose "result" is that tuple)."""
        resolver = self.resolver
        out: set = set()
        for returned in self._returned(cls_dotted, entry, depth, bound=True):
            if returned.kind == "seq" and returned.keys is not None and "result" in returned.keys:
                tuples = resolver._elements(returned, frozenset({"result"}))
            else:
                tuples = {returned}
            for result in tuples:
                if result.kind == "seq" and result.ordered:
                    out |= resolver._elements(result, position)
        return out

    def _returned(self, cls_dotted: str, method: str, depth, bound: bool) -> frozenset:
        """What method `method` of node class `cls_dotted` (its own or inherited) returns,
        called on an instance of the class (`bound`) or on the class (a classmethod)."""
        found = self.resolver.index.find_def(f"{cls_dotted}.{method}", None)
        if found is None:
            return frozenset()
        summary, info = found
        env = _Env(self=frozenset({Value("inst", cls_dotted)})) if bound else {}
        return self.resolver.returns_of(summary, info, env, depth)

    def _own_attrs(self, cls_dotted: str) -> dict:
        found = self.resolver.index.defs.get(cls_dotted)
        return found[0].attrs.get(cls_dotted, {}) if found is not None else {}
