"""CL302: compute a thresholded value in fp32 (`.float()` on its low-precision inputs)."""
from __future__ import annotations

from .wrap_expression import WrapExpressions


class CompareInFp32(WrapExpressions):
    RULE = "CL302"
    DESCRIPTION = "Convert the fp16/bf16 inputs of a thresholded computation to fp32."
    DEFAULT_SUFFIX = ".float()"
