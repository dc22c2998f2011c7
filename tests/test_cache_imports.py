"""A warm cache and names imported from other files of the project: a result that
depends on what another file binds a name to is re-checked when that changes."""
import json
import os
import subprocess
import sys

import pytest

from test_compiled_values import ALBUM  # (the album loop that keeps every output)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENGINE_PLAIN = """\
import torch

denoise = Denoiser()
upscale = torch.compile(Upscaler(), mode="reduce-overhead")
"""


def _check(folder, stats=None) -> list:
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    if stats is not None:
        env["COMPILE_LINT_STATS"] = str(stats)
    proc = subprocess.run([sys.executable, "-m", "compile_lint", "check", "--select", "CL401", "--output-format", "json", "."],
                          cwd=folder, env=env, capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return [(os.path.basename(f["filename"]), f["code"]) for f in json.loads(proc.stdout)]


# engine.py compiles `denoise` without CUDA graphs and spells no CUDA-graph mode at all:
# CL401's pre-check answers album.py from engine.py's bytes without parsing it
GRAPHLESS = "import torch\n\ndenoise = torch.compile(Denoiser())\n"


@pytest.mark.parametrize("before,after", [
    (ENGINE_PLAIN, ENGINE_PLAIN.replace("denoise = Denoiser()", 'denoise = torch.compile(Denoiser(), mode="reduce-overhead")')),
    (GRAPHLESS, GRAPHLESS.replace("Denoiser())", 'Denoiser(), mode="reduce-overhead")')),
], ids=["becomes-compiled", "gains-cuda-graphs"])
def test_a_warm_cache_sees_an_imported_name_become_compiled(tmp_path, before, after):
    """engine.py does not compile `denoise` with CUDA graphs: album.py has nothing to
    report. Then engine.py compiles `denoise` with CUDA graphs: album.py's loop keeps
    every output of a cudagraph tree, and the warm run must say so (it used to serve
    album.py's cached empty result: engine.py was only probed for "compile"; the
    graphless engine only for the CUDA-graph spellings)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(before)
    (tmp_path / "album.py").write_text(ALBUM)
    assert _check(tmp_path) == []
    assert _check(tmp_path) == []  # warm
    (tmp_path / "engine.py").write_text(after)
    assert _check(tmp_path) == [("album.py", "CL401")]
    assert _check(tmp_path) == [("album.py", "CL401")]  # warm again


def test_an_edit_elsewhere_in_the_imported_file_keeps_the_cached_result_valid(tmp_path):
    """The dependency is on what the file binds the name to, not on its bytes: editing
    another line of engine.py leaves album.py's result as it was (and right)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "engine.py").write_text(ENGINE_PLAIN)
    (tmp_path / "album.py").write_text(ALBUM)
    assert _check(tmp_path) == []
    (tmp_path / "engine.py").write_text(ENGINE_PLAIN + "\nSTEPS = 4\n")
    stats = tmp_path.parent / f"{tmp_path.name}-stats.jsonl"
    assert _check(tmp_path, stats) == []
    run = json.loads(stats.read_text().splitlines()[-1])
    assert run["pass1"] == 1 and run["cached"] == 1  # engine.py linted again, album.py's result kept


HELPER = """\
import torch


def ready(model):
    # (a compiled model too)
    if model:
        return model
"""


def _check_codes(folder, codes) -> list:
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("COMPILE_LINT_NO_CACHE", None)
    proc = subprocess.run([sys.executable, "-m", "compile_lint", "check", "--select", codes, "--output-format", "json", "."],
                          cwd=folder, env=env, capture_output=True)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return sorted((os.path.basename(f["filename"]), f["code"]) for f in json.loads(proc.stdout))


def test_a_warm_cache_sees_a_new_caller_file_in_another_folder(tmp_path):
    """helpers.py tests its parameter for truth; nobody passes it a compiled module, so
    nothing is reported. A new file in another folder of the project passes it one: the
    warm run must report helpers.py (its cached result used to be served: a search of
    the project's callers depended on the files it found, not on the file list)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPER)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "old.py").write_text("print('compile nothing')\n")
    assert _check_codes(tmp_path, "CL512") == []
    assert _check_codes(tmp_path, "CL512") == []  # warm
    (tmp_path / "scripts" / "run.py").write_text("import torch\nfrom pkg.helpers import ready\nready(torch.compile(Net()))\n")
    assert _check_codes(tmp_path, "CL512") == [("helpers.py", "CL512")]
    assert _check_codes(tmp_path, "CL512") == [("helpers.py", "CL512")]  # warm again
