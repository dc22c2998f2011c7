"""A warm run must notice every change anywhere in the project, though it no longer
lists unchanged folders (discovery.FolderMemo), reads one manifest instead of a file
per path, and takes module names from the cache while no folder changed
(cache_validity.FolderStates).

Each run is a fresh `compile-lint check` process, as a user runs it, with one change:
the "racy clean" window (cache.RACY_NS) is off, so that files and folders written by
the test a moment ago are trusted like old ones (otherwise every run here would list
and hash everything, and the reuse under test would never happen). Every cached run is
compared with a `--no-cache` run of the same tree.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = ("import sys; import compile_lint.cache as c; c.RACY_NS = -(10 ** 18); "
       "from compile_lint.cli import main; sys.argv[0] = 'compile-lint'; main()")

BLOCKS = """\
import torch

def compile_it(fn):
    return torch.compile(fn)
"""
OTHER = """\
def unrelated(x):
    return x.tolist()
"""
CALLER = """\
import torch
from pkg.sub.other import unrelated

fast = torch.compile(unrelated)
"""
LOCAL = """\
import torch

@torch.compile
def local(x):
    print(x)
    return x
"""


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def project(tmp_path):
    (tmp_path / ".git").mkdir()  # a work tree: .gitignore files count
    write(tmp_path, {
        "pyproject.toml": "[tool.compile-lint]\nextend-exclude = []\n",
        "pkg/__init__.py": "", "pkg/blocks.py": BLOCKS, "pkg/local.py": LOCAL,
        "pkg/sub/__init__.py": "", "pkg/sub/other.py": OTHER,
        "scripts/tool.py": OTHER,
    })
    return tmp_path


def check(root, *args, cache=True):
    env = dict(os.environ, PYTHONPATH=ROOT, COMPILE_LINT_STATS=str(root / "stats.jsonl"))
    env.pop("COMPILE_LINT_NO_CACHE", None)
    flags = [] if cache else ["--no-cache"]
    proc = subprocess.run([sys.executable, "-c", RUN, "check", "--output-format", "json", "-j", "1", *flags, *args],
                          cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    found = sorted((os.path.relpath(f["filename"], root), f["code"], f["location"]["row"]) for f in json.loads(proc.stdout))
    with open(root / "stats.jsonl") as fh:
        stats = json.loads(fh.read().splitlines()[-1])
    return found, stats


def same_as_fresh(root, *args):
    """The cached run's findings (equal to a --no-cache run's) and its stats."""
    found, stats = check(root, *args)
    assert found == check(root, *args, cache=False)[0]
    return found, stats


def codes_in(found, name):
    return [(code, row) for path, code, row in found if path.endswith(name)]


def test_unchanged_project_lists_no_folder_and_reads_no_file(project):
    cold, _ = check(project, ".")
    check(project, ".")  # the first run made the cache's folder (and the stats file) in the root
    warm, stats = check(project, ".")
    assert warm == cold
    assert stats["folders_listed"] == 0 and stats["folders_reused"] >= 4
    assert stats["pass1"] == stats["pass2"] == stats["hashed"] == 0 and stats["cached"] == stats["files"]
    again, stats = check(project, ".")  # and nothing was rewritten that moves the next run
    assert again == cold and stats["written"] == 0


def test_added_deleted_and_edited_files_anywhere_are_noticed(project):
    check(project, ".")
    write(project, {"pkg/sub/deep/__init__.py": "", "pkg/sub/deep/caller.py": CALLER})  # a new region, two folders down
    found, stats = same_as_fresh(project, ".")
    assert ("CL508", 2) in codes_in(found, "pkg/sub/other.py")  # `tolist` is now compiled
    assert stats["pass1"] == 2
    os.remove(project / "pkg/sub/deep/caller.py")
    found, stats = same_as_fresh(project, ".")
    assert codes_in(found, "pkg/sub/other.py") == [] and stats["folders_listed"] >= 1
    (project / "pkg/local.py").write_text(LOCAL.replace("print(x)", "pass"))  # edited in place
    found, stats = same_as_fresh(project, ".")
    assert codes_in(found, "local.py") == [] and stats["pass1"] == 1


def test_renamed_folder_and_new_package_marker(project):
    before, _ = check(project, ".")
    shutil.move(str(project / "pkg"), str(project / "renamed"))
    found, _ = same_as_fresh(project, ".")
    assert {p.split(os.sep)[0] for p, *_ in found} == {"renamed"}

def test_module_names_follow_new_project_markers(project):
    write(project, {"caller.py": "import torch\nfrom scripts.tool import unrelated\nfast = torch.compile(unrelated)\n"})
    found, _ = same_as_fresh(project, ".")
    assert ("CL508", 2) in codes_in(found, "scripts/tool.py")
    check(project, ".")
    # scripts/ becomes a project of its own: tool.py is module `tool`, no longer
    # `scripts.tool`, so its cached summary (which names its module) no longer holds
    (project / "scripts/setup.cfg").write_text("")
    _, stats = same_as_fresh(project, ".")
    assert stats["pass1"] == 1
    os.remove(project / "scripts/setup.cfg")
    found, stats = same_as_fresh(project, ".")
    assert ("CL508", 2) in codes_in(found, "scripts/tool.py") and stats["pass1"] == 1


def test_gitignore_edited_in_place_is_noticed(project):
    found, _ = check(project, ".")
    assert codes_in(found, "local.py")
    (project / ".gitignore").write_text("")
    check(project, ".")
    (project / ".gitignore").write_text("pkg/local.py\n")  # the folder's entries are unchanged
    found, stats = same_as_fresh(project, ".")
    assert codes_in(found, "local.py") == [] and stats["folders_listed"] >= 1
    (project / "pkg/.gitignore").write_text("")  # a nested one
    check(project, ".")
    (project / ".gitignore").write_text("")
    (project / "pkg/.gitignore").write_text("local.py\n")
    found, _ = same_as_fresh(project, ".")
    assert codes_in(found, "local.py") == []


def test_config_change_is_noticed(project):
    found, _ = check(project, ".")
    assert codes_in(found, "local.py")
    (project / "pyproject.toml").write_text('[tool.compile-lint]\nextend-exclude = ["pkg/local.py"]\n')
    found, _ = same_as_fresh(project, ".")
    assert codes_in(found, "local.py") == []
    (project / "pkg/sub/compile-lint.toml").write_text('ignore = ["ALL"]\n')  # a new config further down
    same_as_fresh(project, ".")


def test_partial_run_sees_a_region_set_up_in_a_new_file(project):
    check(project, ".")
    write(project, {"pkg/sub/deep/__init__.py": "", "pkg/sub/deep/caller.py": CALLER.replace(
        "fast = torch.compile(unrelated)", "fast = torch.jit.trace(unrelated, torch.rand(2))")})
    whole, _ = check(project, ".")
    one, stats = same_as_fresh(project, "pkg/sub/other.py")
    assert one == [f for f in whole if f[0].endswith("other.py")]
    warm, stats = check(project, "pkg/sub/other.py")
    assert warm == one and stats["folders_listed"] == 0 and stats["pass1"] == 0


def test_a_file_searched_for_a_callers_name_stales_results_only_when_the_answer_changes(tmp_path):
    # CL202 looks for callers of `set_steps` across the project. The files it only
    # searched (a byte probe) must not stale model.py's result when they change without
    # gaining or losing a call; a file that gains or loses the call must.
    import textwrap

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn

        class Denoiser(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = 10
                self.conv = nn.Conv2d(3, 3, 3, padding=1)

            def set_steps(self, n):
                self.steps = n

            def forward(self, x):
                for _ in range(self.steps):
                    x = x - self.conv(x)
                return x

        model = torch.compile(Denoiser())
        """))
    (tmp_path / "notes.py").write_text("STEPS = [4, 8, 16]\n")
    (tmp_path / "run.py").write_text("from model import model\n")

    def findings():
        out = subprocess.run(
            [sys.executable, "-m", "compile_lint", "check", "--select", "CL202", "--output-format", "json", "."],
            cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
        )
        assert out.returncode in (0, 1), out.stderr
        return sorted((f["filename"], f["code"]) for f in json.loads(out.stdout))

    time.sleep(2.1)  # past the racy window: results of these files may be cached
    assert findings() == []
    (tmp_path / "notes.py").write_text("STEPS = [4, 8, 16, 32]\n")  # no call gained
    assert findings() == []
    (tmp_path / "run.py").write_text(
        "from model import model\nfrom notes import STEPS\n"
        "for n in STEPS:\n    model.set_steps(n)\n"
    )
    time.sleep(2.1)
    assert [code for _, code in findings()] == ["CL202"]
    (tmp_path / "run.py").write_text("from model import model\n")
    time.sleep(2.1)
    assert findings() == []
