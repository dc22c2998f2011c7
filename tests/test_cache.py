"""Worker processes, the results cache and start-up cost (compile_lint.parallel, .cache).

The cache must never serve a stale result: every test here compares a cached run with
a fresh run without the cache, after edits that do and do not change the region index.
"""
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from compile_lint import cache as cache_mod
from compile_lint.cache import CACHE_DIR, ResultsCache
from compile_lint.config import Settings
from compile_lint.engine import Linter, Selection

BLOCKS = """\
import torch

def compile_it(fn):
    return torch.compile(fn)
"""
BLOCKS_EAGER = """\
import torch

def compile_it(fn):
    return fn
"""
USES = """\
from pkg.blocks import compile_it

def step(x):
    return x / x.amax().item()

fast_step = compile_it(step)
"""
OTHER = """\
import torch

def unrelated(x):
    return x.tolist()
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
    write(tmp_path, {"pkg/__init__.py": "", "pkg/blocks.py": BLOCKS, "pkg/uses.py": USES,
                     "pkg/other.py": OTHER, "pkg/local.py": LOCAL})
    return tmp_path


def paths_of(root):
    return sorted(str(p) for p in root.rglob("*.py") if CACHE_DIR not in p.parts)


def lint(root, cache=True, jobs=1, select=None):
    settings = Settings(root=str(root))
    linter = Linter(lambda _p: settings, Selection(select=select), jobs=jobs,
                    cache=ResultsCache(str(root)) if cache else None)
    results = linter.lint(paths_of(root))
    found = sorted((os.path.relpath(f.path, root), f.start.row, f.code, f.message) for r in results for f in r.findings)
    return found, linter.stats


def codes_in(found, name):
    return [(row, code) for path, row, code, _ in found if path.endswith(name)]


def test_changing_blocks_relints_exactly_the_files_whose_regions_depend_on_it(project):
    cold, stats = lint(project)
    assert stats["pass1"] == 5 and stats["cached"] == 0
    assert (4, "CL508") in codes_in(cold, "uses.py"), cold  # step is compiled through compile_it
    warm, stats = lint(project)
    assert warm == cold and stats["pass1"] == 0 and stats["pass2"] == 0 and stats["cached"] == 5

    (project / "pkg/blocks.py").write_text(BLOCKS_EAGER)  # compile_it no longer compiles
    after, stats = lint(project)
    assert after == lint(project, cache=False)[0]
    assert codes_in(after, "uses.py") == []
    assert stats["pass1"] == 1  # blocks.py: the only file whose bytes changed
    # uses.py, whose regions changed; not pkg/__init__.py, which defines nothing (the
    # regions of `pkg.uses.step` are a submodule's, not its own)
    assert stats["pass2"] == 1
    assert stats["cached"] == 3  # __init__.py, other.py and local.py: untouched

    (project / "pkg/blocks.py").write_text(BLOCKS)
    back, stats = lint(project)
    assert back == cold and stats["pass1"] == 1 and stats["pass2"] == 1


def test_a_package_init_is_relinted_for_its_own_defs_regions_only(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "def step(x):\n    return x / x.amax().item()\n",
                     "pkg/sub.py": "import torch\n\ndef g(x):\n    return x.tolist()\n",
                     "run.py": "import torch\nfrom pkg import step\nfast = torch.compile(step)\n"})
    cold, _ = lint(tmp_path)
    assert (2, "CL508") in codes_in(cold, "__init__.py"), cold
    # a new region in a submodule of the package: its __init__.py keeps its results
    (tmp_path / "pkg/sub.py").write_text("import torch\n\ndef g(x):\n    return x.tolist()\n\ng = torch.compile(g)\n")
    found, stats = lint(tmp_path)
    assert found == lint(tmp_path, cache=False)[0]
    assert (4, "CL508") in codes_in(found, "sub.py"), found
    assert stats["pass1"] == 1 and stats["pass2"] == 0 and stats["cached"] == 2  # sub.py only
    # its own def leaves the region: it is linted again
    (tmp_path / "run.py").write_text("import torch\nfrom pkg import step\n")
    found, stats = lint(tmp_path)
    assert found == lint(tmp_path, cache=False)[0]
    assert codes_in(found, "__init__.py") == []
    assert stats["pass1"] == 1 and stats["pass2"] == 1  # run.py; __init__.py


def test_edit_that_leaves_regions_alone_relints_only_that_file(project):
    cold, _ = lint(project)
    (project / "pkg/other.py").write_text(OTHER + "\n# a comment\n")  # nobody imports it
    warm, stats = lint(project)
    assert warm == cold
    assert stats["pass1"] == 1 and stats["pass2"] == 0 and stats["cached"] == 4  # all but other.py
    # blocks.py is read by the rules linting uses.py (its compile_it): at most that one
    # more file is re-linted for a comment there
    (project / "pkg/blocks.py").write_text(BLOCKS + "\n# a comment\n")
    warm, stats = lint(project)
    assert warm == cold
    assert stats["pass1"] == 1 and stats["pass2"] <= 1 and stats["cached"] >= 3


def test_a_new_caller_makes_a_cached_file_a_region(project):
    lint(project)
    (project / "pkg/caller.py").write_text("import torch\nfrom pkg.other import unrelated\ng = torch.compile(unrelated)\n")
    found, stats = lint(project)
    assert found == lint(project, cache=False)[0]
    assert (4, "CL508") in codes_in(found, "other.py")
    assert stats["pass1"] == 1 and stats["pass2"] >= 1


def test_results_equal_without_cache_after_a_sequence_of_edits(project):
    edits = [
        ("pkg/local.py", LOCAL.replace("@torch.compile\n", "")),
        ("pkg/other.py", OTHER + "\nimport torch\nfast = torch.compile(unrelated)\n"),
        ("pkg/blocks.py", BLOCKS_EAGER),
        ("pkg/uses.py", "\n\n" + USES),
        ("pkg/blocks.py", BLOCKS),
        ("pkg/other.py", "def broken(:\n"),
        ("pkg/other.py", OTHER),
        ("pkg/local.py", LOCAL),
    ]
    for rel, text in edits:
        (project / rel).write_text(text)
        assert lint(project)[0] == lint(project, cache=False)[0], rel


def test_touch_without_change_is_a_hit_and_same_size_edit_is_not(project, monkeypatch):
    monkeypatch.setattr(cache_mod, "RACY_NS", -(10 ** 18))  # trust every stat signature
    cold, _ = lint(project)
    _, stats = lint(project)
    assert stats["hashed"] == 0 and stats["cached"] == 5  # the stat fast path
    path = project / "pkg/other.py"
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))  # touch
    found, stats = lint(project)
    assert found == cold and stats["hashed"] == 1 and stats["pass1"] == 0
    # same size, same mtime, other bytes: ctime still moves, so it is re-read
    text = path.read_text().replace("tolist", "tolust")
    st = os.stat(path)
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    found, stats = lint(project)
    assert stats["pass1"] == 1
    assert codes_in(found, "other.py") == codes_in(lint(project, cache=False)[0], "other.py")


def test_settings_select_and_target_are_part_of_the_key(project):
    all_codes, _ = lint(project)
    only, stats = lint(project, select=("CL508",))
    assert stats["pass1"] == 0 and stats["pass2"] == 5  # summaries reused, findings not
    assert only == lint(project, cache=False, select=("CL508",))[0]
    assert lint(project)[0] == all_codes


BAD_BYTES = [b"\x80\x04garbage", pickle.dumps(os.system), b""]  # the middle one would run code if loaded naively


def test_corrupt_or_foreign_summary_files_are_ignored(project):
    cold, _ = lint(project)
    entries = [os.path.join(d, f) for d, _, fs in os.walk(project / CACHE_DIR / "files") for f in fs]
    assert len(entries) == 5
    for entry, bad in zip(entries, BAD_BYTES):
        with open(entry, "wb") as fh:
            fh.write(bad)
    os.remove(project / CACHE_DIR / "regions")
    # another selection: every file's findings are computed again, against an index
    # that is rebuilt from the summaries
    found, stats = lint(project, select=("CL508",))
    assert found == lint(project, cache=False, select=("CL508",))[0] and stats["pass1"] == 3


@pytest.mark.parametrize("bad", BAD_BYTES, ids=["garbage", "foreign", "empty"])
def test_corrupt_or_foreign_manifest_is_ignored(project, bad):
    cold, _ = lint(project)
    (project / CACHE_DIR / "manifest").write_bytes(bad)
    found, stats = lint(project)
    assert found == cold and stats["pass1"] == 5 and stats["cached"] == 0
    found, stats = lint(project)
    assert found == cold and stats["cached"] == 5


def test_cache_dir_has_tag_and_files_with_findings_are_cached(project):
    lint(project)
    tag = (project / CACHE_DIR / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (project / CACHE_DIR / ".gitignore").read_text().strip().endswith("*")
    _, stats = lint(project)
    assert stats["cached"] == 5  # uses.py and local.py have findings


def test_two_workers_give_the_same_results_as_one(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/blocks.py": BLOCKS, "pkg/uses.py": USES, "pkg/local.py": LOCAL}
    for i in range(12):
        files[f"pkg/m{i}.py"] = OTHER + f"\nfrom pkg.blocks import compile_it\nf{i} = compile_it(unrelated)\n" * (i % 2)
    write(tmp_path, files)
    one, _ = lint(tmp_path, cache=False, jobs=1)
    two, stats = lint(tmp_path, cache=False, jobs=2)
    assert stats.get("pass1_workers") == 2
    assert one == two and any(code == "CL508" for *_, code, _ in [(p, r, c, m) for p, r, c, m in one])


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "compile_lint", *args], capture_output=True, text=True, cwd=str(cwd))


def test_cli_cache_no_cache_and_clean(project):
    proc = run_cli("check", ".", "--no-cache", cwd=project)
    assert proc.returncode == 1 and not (project / CACHE_DIR).exists()
    first = run_cli("check", ".", "-j", "2", cwd=project)
    assert (project / CACHE_DIR / "CACHEDIR.TAG").exists()
    second = run_cli("check", ".", cwd=project)
    assert first.stdout == second.stdout == proc.stdout and second.returncode == 1
    proc = run_cli("clean", cwd=project)
    assert proc.returncode == 0 and "Removed" in proc.stdout and not (project / CACHE_DIR).exists()
    proc = run_cli("clean", cwd=project)
    assert proc.returncode == 0 and "No cache" in proc.stdout


def test_cache_lives_next_to_the_config_file(project):
    (project / "compile-lint.toml").write_text("select = ['ALL']\n")
    sub = project / "pkg"
    run_cli("check", ".", cwd=sub)
    assert (project / CACHE_DIR).is_dir() and not (sub / CACHE_DIR).exists()


def test_clean_refuses_a_folder_that_is_not_ours(tmp_path):
    (tmp_path / CACHE_DIR).mkdir()
    (tmp_path / CACHE_DIR / "precious.txt").write_text("keep me")
    proc = run_cli("clean", cwd=tmp_path)
    assert proc.returncode == 2 and "CACHEDIR.TAG" in proc.stderr
    assert (tmp_path / CACHE_DIR / "precious.txt").exists()


def test_read_only_project_lints_without_a_cache(project):
    if os.geteuid() == 0:
        pytest.skip("running as root: a read-only folder is still writable")
    os.chmod(project, 0o555)
    try:
        proc = run_cli("check", ".", cwd=project)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
    finally:
        os.chmod(project, 0o755)


def test_check_imports_neither_libcst_nor_torch(project):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "compile_lint", "check", "pkg/local.py", "-j", "2"],
        capture_output=True, text=True, cwd=str(project),
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert imported, "no -X importtime output"
    heavy = sorted(m for m in imported if m.split(".")[0] in ("libcst", "torch", "numpy"))
    assert heavy == [], heavy


def test_a_project_under_a_busy_folder_keeps_its_module_names(tmp_path, monkeypatch):
    """A warm run re-derives a file's module name only when a folder it depends on
    changed: its own, its packages', up to the project root. On dd75348 a project right
    under a folder that changes all the time (/tmp/proj) re-derived every name on every
    run (the folder chain went up to /): 1.95 s against 0.6 s elsewhere."""
    import time

    from compile_lint.analysis.semantic import names

    parent = tmp_path / "busy"
    root = parent / "proj"
    write(root, {"pyproject.toml": "[project]\nname = 'p'\n", "pkg/__init__.py": "", "pkg/blocks.py": BLOCKS,
                 "pkg/uses.py": USES, "train.py": "import torch\nmodel = torch.compile(Net())\n"})
    cold, _ = lint(root)  # (creates the cache folder in the project root)
    time.sleep(cache_mod.RACY_NS / 1e9 + 0.2)  # folders older than the racy window: their signatures hold
    lint(root)  # records now hold the folder chains
    derived = []
    real = names.module_name_for
    monkeypatch.setattr(names, "module_name_for", lambda path, *a: derived.append(path) or real(path, *a))
    (parent / "download.part").write_text("x")  # the busy folder changed just now
    found, stats = lint(root)
    assert found == cold and stats["cached"] == 4
    assert derived == []
    (root / "pkg" / "sub").mkdir()  # a folder of the project changed: its files' names are derived again
    lint(root)
    assert sorted({os.path.basename(p) for p in derived}) == ["__init__.py", "blocks.py", "uses.py"]


def _stats_run(cwd, stats, *args):
    env = dict(os.environ, COMPILE_LINT_STATS=str(stats))
    env.pop("COMPILE_LINT_NO_CACHE", None)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "compile_lint", *args], capture_output=True, text=True,
                          cwd=str(cwd), env=env)
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    with open(stats) as fh:
        line = fh.read().splitlines()[-1]
    import json

    return proc, json.loads(line), imported


def test_fix_edits_are_computed_once_and_cached_with_the_findings(tmp_path):
    """Issue 22: `--output-format json` computed every fix's edits on every run, cache or
    not (52 s cold / 70 s warm on a 25k-line app whose text report took 5.3 / 0.4 s), and
    COMPILE_LINT_STATS said 0.1 s. Now the lint computes them (in its workers) and caches
    them with the findings; a warm JSON run imports no libcst; the stats line covers
    the whole command."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "m.py").write_text("import torch\nmodel = Net()\ntorch.compile(model)\nwith torch.cuda.amp.autocast():\n    y = model(x)\n")
    stats = tmp_path / "stats.jsonl"
    cold, first, _ = _stats_run(tmp_path, stats, "check", "m.py", "--output-format", "json")
    assert first["edits_cpu_s"] > 0 and "command_s" in first and first["command_s"] >= first["wall_s"]
    warm, second, imported = _stats_run(tmp_path, stats, "check", "m.py", "--output-format", "json")
    assert warm.stdout == cold.stdout and second["cached"] == 1 and second.get("edits_cpu_s", 0) == 0
    assert not [m for m in imported if m.split(".")[0] == "libcst"], "a warm JSON run computed edits"
    edits = [f["fix"]["edits"] for f in __import__("json").loads(warm.stdout)]
    assert edits == [[{"content": "model = ", "location": {"row": 3, "column": 1}, "end_location": {"row": 3, "column": 1}}],
                     [{"content": "amp.autocast(\"cuda\"", "location": {"row": 4, "column": 12},
                       "end_location": {"row": 4, "column": 30}}]], edits
    # a text run caches findings without edits; the next JSON run fills them in once
    (tmp_path / "n.py").write_text("import torch\nnet = Net()\ntorch.compile(net)\n")
    _stats_run(tmp_path, stats, "check", "n.py")
    _, filled, _ = _stats_run(tmp_path, stats, "check", "n.py", "--output-format", "json")
    assert filled["edits_filled"] == 1 and filled["pass1"] == 0
    _, again, imported = _stats_run(tmp_path, stats, "check", "n.py", "--output-format", "json")
    assert again["edits_filled"] == 0 and not [m for m in imported if m.split(".")[0] == "libcst"]
    # `fix` reports its own time
    _, fixed, _ = _stats_run(tmp_path, stats, "fix", "n.py")
    assert fixed["command"] == "fix" and fixed["fix_s"] > 0 and fixed["files_fixed"] == 1
