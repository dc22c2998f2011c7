"""Fix edits computed without libcst (compile_lint/text_fixes.py) are the codemod's edits.

Each finding whose codemod has a text rewrite gets its edits both ways (FileEdits with
`text_fixes` on and off) and they must be equal, on every rule case and on generated
calls: spellings, argument forms, whitespace, comments, parentheses, line breaks, CRLF
and tab indentation, non-ASCII text before the call. A rewrite may decline (then the
codemod runs, so the edits are the codemod's by construction); the plain shapes must
not decline, or the JSON report pays libcst's import for them.
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection
from compile_lint.fix_edits import FileEdits
from compile_lint.rules import all_rules
from compile_lint.text_fixes import REWRITES


def _fixable(path: str, data: bytes, code: str):
    linter = Linter(lambda _p: Settings(), Selection(select=(code,)))
    results = linter.lint([], stdin=(path, data))
    return [f for r in results for f in r.findings if f.fix is not None and f.fix.codemod in REWRITES]


def _both_ways(path: str, data: bytes, finding):
    """(edits from the text rewrite or None where it declines, edits from the codemod)."""
    quick = FileEdits(path, data)
    rewrite = REWRITES[finding.fix.codemod]
    by_text = quick._text_edits(rewrite, finding)
    by_codemod = FileEdits(path, data, text_fixes=False).edits(finding)
    return by_text, by_codemod


def _cases():
    for code, rule in all_rules().items():
        if rule.codemod not in REWRITES:
            continue
        for index, case in enumerate(rule.invalid):
            if case.fixed is not None and not case.files:
                yield pytest.param(code, index, id=f"{code}-{index}")


def test_every_rewrite_names_a_codemod_of_the_same_unit():
    from compile_lint.codemods_home import codemod_class

    for spec, (kind, _build) in REWRITES.items():
        cls = codemod_class(spec)
        assert getattr(cls, "UNIT", "statement") == kind
        # the rewrite works on the finding's own place: the codemod must touch no other
        assert list(cls.touched_points(3, 7, {})) == [(3, 7)]


@pytest.mark.parametrize("code,index", list(_cases()))
def test_rule_cases_text_edits_equal_the_codemods(code, index, tmp_path):
    case = all_rules()[code].invalid[index]
    path = str(tmp_path / "case.py")
    data = case.code.encode()
    for f in _fixable(path, data, code):
        by_text, by_codemod = _both_ways(path, data, f)
        if by_text is not None:
            assert by_text == by_codemod, f"{code} at {f.start}"


PLAIN = [
    "import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
    "import torch\nwith torch.cuda.amp.autocast(enabled=True, dtype=torch.float16):\n    pass\n",
    "import torch\nwith torch.cuda.amp.autocast(True):\n    pass\n",
    "import torch\nscaler = torch.cuda.amp.GradScaler()\n",
    "import torch\nscaler = torch.cuda.amp.GradScaler(init_scale=2.0**16, enabled=use_amp)\n",
    "import torch as th\ndef f(m, x):\n    with th.cpu.amp.autocast(dtype=th.bfloat16):\n        return m(x)\n",
    "import torch\nclass T:\n    def step(self):\n        self.scaler = torch.cuda.amp.GradScaler(\n            enabled=self.amp,\n        )\n",
]


@pytest.mark.parametrize("code", PLAIN)
def test_plain_calls_need_no_libcst(code, tmp_path):
    """The shapes of real code are done by the text rewrite, and equal the codemod's."""
    path = str(tmp_path / "m.py")
    findings = _fixable(path, code.encode(), "CL507")
    assert findings
    for f in findings:
        by_text, by_codemod = _both_ways(path, code.encode(), f)
        assert by_text is not None, f"declined at {f.start}"
        assert by_text == by_codemod
        assert by_text  # an edit


NAMES = ["torch.cuda.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler"]
ARGS = ["True", "flag", "(flag)", "cfg.amp", "f(z)", "torch.float16", "dtype=torch.float16", "enabled=use_amp",
        "cache_enabled=False", "**kw", "*a", "x if c else y", "[1, 2]", "'é'", "lambda: 1"]
SEPARATORS = [", ", ",", ",\n        ", " , ", ",  # why\n        ", ",\\\n        "]
OPENINGS = ["", " ", "\n        ", "  # note\n        ", "\\\n        "]
CLOSINGS = ["", " ", ",", ",\n    ", "\n    "]
CONTEXTS = [
    "with {call}:\n    pass\n",
    "x = {call}\n",
    "def f(step):\n    with {call}:\n        return step()\n",
    "class M:\n    def g(self):\n        self.s = {call}\n",
    "y = 1; x = {call}\n",
    "é = 'ü'; x = {call}\n",
    "wrapped = {call}(step)\n",
    "x = ({call})\n",
    "x = [{call}, {call}]\n",
    "if c:\n\tx = {call}\n",
    "s = '''\ntext\n'''; x = {call}\n",
]


@st.composite
def programs(draw):
    name = draw(st.sampled_from(NAMES))
    alias = draw(st.sampled_from(["torch", "T"]))
    if alias == "T":
        name = "T" + name[len("torch"):]
    args = draw(st.lists(st.sampled_from(ARGS), max_size=3))
    call = name
    if draw(st.booleans()):
        call = f"({name})" if draw(st.booleans()) else f"{name} "
    text = call + "("
    if args:
        text += draw(st.sampled_from(OPENINGS))
        for n, arg in enumerate(args):
            if n:
                text += draw(st.sampled_from(SEPARATORS))
            text += arg
        text += draw(st.sampled_from(CLOSINGS))
    else:
        text += draw(st.sampled_from(["", " ", "\n    "]))
    text += ")"
    body = draw(st.sampled_from(CONTEXTS)).format(call=text)
    head = "import torch\n" if alias == "torch" else "import torch as T\n"
    code = head + body
    if draw(st.booleans()):
        code = code.replace("\n", "\r\n")
    return code


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(programs())
def test_generated_calls_text_edits_equal_the_codemods(tmp_path_factory, code):
    import ast

    try:
        ast.parse(code)
    except SyntaxError:
        return  # (an argument order Python refuses)
    path = str(tmp_path_factory.mktemp("gen") / "m.py")
    data = code.encode()
    for f in _fixable(path, data, "CL507"):
        by_text, by_codemod = _both_ways(path, data, f)
        if by_text is not None:
            assert by_text == by_codemod, (code, f.start)
