"""What a rule is. One rule lives in one module: its code, name, message, page
(the docstring), detection, test cases and the name of its rewrite.

Pages follow Ruff's sections: What it does / Why is this bad? / Example /
Use instead / Fix safety / References. `compile-lint rule CODE` prints them;
the test suite turns `valid` and `invalid` cases into tests.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Optional

from ..analysis.modules.classes import site_of_kind
from ..analysis.reach.regions import COMPILE
from ..model import DOC_URL, SAFE, UNSAFE, Finding, Fix, Related  # noqa: F401 (DOC_URL: the rules' pages)
from ..analysis.semantic.facts import Fact, ModuleFacts

PAGE_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")


@dataclass
class Case:
    """A test case that is also documentation.

    `code` is the module under test. For a cross-file case, `files` maps relative
    paths to sources and `path` names the file whose findings are checked.
    `fixed` is the expected result of `compile-lint fix` (with `--unsafe-fixes`
    when the rule's fix is unsafe). `at` pins where an invalid case's findings are
    reported: the (row, column) of each, 1-based as editors show them (`rows` is the
    older, row-only form).
    """

    code: str
    fixed: Optional[str] = None
    rows: Optional[list[int]] = None
    at: Optional[list[tuple[int, int]]] = None
    files: dict[str, str] = field(default_factory=dict)
    path: str = "case.py"
    settings: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def all_files(self) -> dict[str, str]:
        return {**{rel: textwrap.dedent(text) for rel, text in self.files.items()}, self.path: textwrap.dedent(self.code)}


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, shown in `rules` and as SARIF shortDescription
    fix_safety: ClassVar[str] = "none"  # "safe" | "unsafe" | "none": the strongest fix offered
    codemod: ClassVar[Optional[str]] = None  # "codemods.module:Class"
    # The rule cannot fire in a file that contains none of these byte strings;
    # empty means "always run" (a region can come from another file).
    requires: ClassVar[tuple[bytes, ...]] = ()
    # The declared facts check() asks for (`facts.get(F)`, analysis/semantic/facts.py Fact
    # subclasses: RegionsFact, CompiledValuesFact, PrecisionFact, ClassAttrsFact, ...).
    # The engine computes each once per file; asking for an undeclared one fails.
    needs: ClassVar[tuple[type[Fact], ...]] = ()
    # False: `ALL` (the default selection) leaves the rule out; select it by code or prefix.
    default_selected: ClassVar[bool] = True
    # True (with default_selected False): `compile-lint verify` lints with the rule even
    # where the selection leaves it out, to pick the runtime check that can prove its
    # findings (CL102's frozen-state check). `check` does not report them: too many are
    # false on real code to show unproven. An `ignore` of the rule still leaves it out.
    verify_candidate: ClassVar[bool] = False
    # False: `compile-lint verify` does not run the function or class holding a finding
    # (a deprecated call, checkpoint keys, a hook: comparing eager with compiled output
    # of that function shows nothing, and running it may train, save or export).
    verify_target: ClassVar[bool] = True
    # A graph-break rule: the official Dynamo IDs its findings carry, each with the
    # constructs that give it (the page lists them; analysis/graph_breaks/ids.py).
    graph_break_ids: ClassVar[dict[str, str]] = {}
    # Statement-local (compile_lint/incremental.py relints such a rule on the top-level
    # statements an edit can reach, keeping its other findings): every finding lies in
    # the top-level statement of the node it was made from, a node the rule takes from
    # `facts.primary(...)`; and what decides a finding in statement T is T itself, the
    # file's module-level statements, the top-level defs and classes T reaches by name
    # (directly or through others), the names table, the region index and other files.
    # Never a scan of the other defs' and classes' bodies for something else (a flag of
    # the whole file, the uses of a name), unless from a module-level scope (those are
    # always relinted). False (the default): the rule runs on the whole file each time.
    local: ClassVar[bool] = False
    valid: ClassVar[list[Case]] = []
    invalid: ClassVar[list[Case]] = []

    @property
    def family(self) -> str:
        return self.code[:3] + "xx"

    @classmethod
    def page(cls) -> str:
        page = textwrap.dedent(inspect.getdoc(cls) or "").strip()
        if cls.graph_break_ids and "## Example" in page:
            head, tail = page.split("## Example", 1)
            page = head + _ids_section(cls.graph_break_ids) + "\n\n## Example" + tail
        return page

    @property
    def url(self) -> str:
        return DOC_URL.format(code=self.code)

    def check(self, facts: ModuleFacts) -> Iterator[Finding]:
        raise NotImplementedError

    # -- helpers for check() ---------------------------------------------------------
    def finding(
        self,
        facts: ModuleFacts,
        node: ast.AST,
        message: str,
        *,
        fix: Optional[str] = None,
        unsafe: bool = False,
        data: Optional[dict[str, Any]] = None,
        region=None,
        related: Optional[list[Related]] = None,
        graph_break=None,
    ) -> Finding:
        """A finding at `node`; with `fix` (its title), the rule's codemod applies.

        `message` is one line saying what is wrong (the page says why). With `region`
        (the compiled or traced region holding `node`), the call that compiles or
        traces it becomes the finding's first related location, unless the finding is
        on that call's line. `graph_break`: the break a graph-break rule predicts
        (model.BreakInfo: its official ID and the registry's texts)."""
        start, end = facts.source.node_range(node)
        fix_obj = None
        if fix is not None:
            assert self.codemod, f"{self.code} offers a fix but names no codemod"
            fix_obj = Fix(UNSAFE if unsafe else SAFE, fix, self.codemod, dict(data or {}))
        kind = None
        notes = []
        if region is not None:
            kind = "cudagraph" if "cudagraph" in region.kinds else sorted(region.kinds)[0]
            # a finding on a compile/trace call itself needs no note pointing at a call
            on_site = any(s.path == facts.path and s.row == start.row for s in region.sites)
            site = None if on_site else site_of_kind(region, kind)
            if site is not None:
                notes.append(Related(site.path, site.row, None, site_note(site, region.via)))
        return Finding(
            self.code, message, facts.path, start, end, fix_obj,
            scope=facts.scope_of(node), region_kind=kind, related=notes + list(related or ()),
            graph_break=graph_break,
        )


MEASURED_ON = "2.13"  # the release the graph-break rules are measured on (scripts/measure/graph_break_causes.py)


def _ids_section(ids: dict[str, str]) -> str:
    """The graph-break IDs a rule's findings carry, with Dynamo's names for them."""
    from ..analysis.graph_breaks.ids import describe, url

    rows = ["## Graph-break IDs", "",
            f"The official IDs Dynamo gives these breaks (torch {MEASURED_ON}'s "
            "`torch/_dynamo/graph_break_registry.json`); each finding names its ID, and in JSON and "
            "SARIF carries the registry's explanation and hints for `target-torch-version`.", "",
            "| ID | Dynamo's name | constructs |", "|---|---|---|"]
    for gb_id, what in ids.items():
        info = describe(gb_id, MEASURED_ON)
        name = info.gb_type if info else "(not in this release)"
        rows.append(f"| [{gb_id}]({url(gb_id)}) | {name} | {what} |")
    return "\n".join(rows) + "\n"


def site_note(site, via: Optional[str] = None) -> str:
    """What a compile/trace site does, for a related location placed on it:
    "compiled by torch.compile() with mode='reduce-overhead', reaching this code from `Net.forward`"."""
    opts = []
    if site.mode:
        opts.append(f"mode={site.mode!r}")
    if site.dynamic is not None:
        opts.append(f"dynamic={site.dynamic}")
    verb = "compiled" if site.kind == COMPILE else "traced"
    api = "Module.compile()" if site.api == "Module.compile" else f"{site.api}()"
    text = f"{verb} by {api}" + (f" with {', '.join(opts)}" if opts else "")
    if getattr(site, "origin", "static") != "static":  # declared or recorded (analysis/reach/declared.py)
        from ..analysis.reach.declared import declared_note

        text = declared_note(site)
    return f"{text}, reaching this code from `{via}`" if via else text
