"""Shared by the hazard measurements in this folder: the header line each one prints
(torch and Python versions, the date), and the Python source of a torch module in the
installed torch and in downloaded torch wheels, for behaviour that lives in source
(config defaults, warning texts) and can be read for releases we cannot install.

Wheels: set TORCH_WHEELS to a folder of torch wheels (default /tmp/torch-wheels). A
small wheel is enough (only its .py files are read; it is never installed):

    PIP_CONSTRAINT=/dev/null pip download --no-deps --only-binary=:all: \
        --platform macosx_14_0_arm64 --python-version 3.12 -d /tmp/torch-wheels torch==2.15.0
"""
from __future__ import annotations

import datetime
import glob
import os
import platform
import re
import sys
import zipfile


def header(title: str) -> None:
    import torch

    today = datetime.date.today().isoformat()
    print(f"# {title}")
    print(f"# torch {torch.__version__}, Python {platform.python_version()}, {sys.platform}, {today}")


def torch_sources(path: str) -> dict[str, str]:
    """{version: text} of `path` (e.g. "torch/_dynamo/config.py") in the installed torch
    and in each wheel under $TORCH_WHEELS; a wheel without the file is left out."""
    import torch

    sources: dict[str, str] = {}
    root = os.path.dirname(os.path.dirname(torch.__file__))
    installed = os.path.join(root, path)
    if os.path.exists(installed):
        with open(installed, encoding="utf-8") as handle:
            sources[f"{torch.__version__} (installed)"] = handle.read()
    folder = os.environ.get("TORCH_WHEELS", "/tmp/torch-wheels")
    for wheel in sorted(glob.glob(os.path.join(folder, "torch-*.whl"))):
        version = re.match(r"torch-([^-]+)-", os.path.basename(wheel)).group(1)
        with zipfile.ZipFile(wheel) as archive:
            if path in archive.namelist():
                sources[f"{version} (wheel)"] = archive.read(path).decode("utf-8")
    if len(sources) < 2:
        print(f"# no torch wheels under {folder}: only the installed source was read")
    return sources


def verdict(reproduces: bool, text: str) -> None:
    print(f"VERDICT: {'reproduces' if reproduces else 'does not reproduce'}: {text}")
