"""CL304: clamp the input of a `torch.where` branch into the domain the branch is selected on."""
from __future__ import annotations

from .wrap_expression import WrapExpressions


class ClampBranchInput(WrapExpressions):
    RULE = "CL304"
    DESCRIPTION = "Clamp the variable of an unselected torch.where branch to the branch's threshold."
