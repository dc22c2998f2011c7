"""CL401: `.clone()` a CUDA-graph output where it is kept past the next call."""
from __future__ import annotations

from .wrap_expression import WrapExpressions


class CloneCudagraphOutput(WrapExpressions):
    RULE = "CL401"
    DESCRIPTION = "Clone the output of a CUDA-graph compiled call where it is kept."
    DEFAULT_SUFFIX = ".clone()"
