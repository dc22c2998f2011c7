"""The oracle bench's CI slice: tiny self-written modules with known breaks.

    python bench/oracle/run.py --models bench/oracle/slice/models.py --venv .venv --out OUT
"""
from oracle_catalog import Entry, Source

SOURCES = [Source("slice", "{here}/src", packages=("oracle_slice",), path=("{here}/src",), version="CI slice")]

ENTRIES = [
    Entry("slice/Nonzero", "slice", "builders.py:net", {"name": "Nonzero"}),
    Entry("slice/Item", "slice", "builders.py:net", {"name": "Item"}),
    Entry("slice/Branch", "slice", "builders.py:net", {"name": "Branch"}),
    Entry("slice/PrintInLoop", "slice", "builders.py:net", {"name": "PrintInLoop"}, mode="train"),
    Entry("slice/Clean", "slice", "builders.py:net", {"name": "Clean"}),
    Entry("slice/rescale", "slice", "builders.py:net", {"name": "rescale"}),
    Entry("slice/LayerDrop", "slice", "builders.py:net", {"name": "LayerDrop"}),
    Entry("slice/SwitchOnce", "slice", "builders.py:net", {"name": "SwitchOnce"}),
    Entry("slice/ShortCircuit", "slice", "builders.py:net", {"name": "ShortCircuit"}),
    Entry("slice/HalfClamp", "slice", "builders.py:net", {"name": "HalfClamp"}),
    Entry("slice/MakesGenerator", "slice", "builders.py:net", {"name": "MakesGenerator"}),
    Entry("slice/SeedsGenerator", "slice", "builders.py:net", {"name": "SeedsGenerator"}),
    Entry("slice/DrawsWithGenerator", "slice", "builders.py:net", {"name": "DrawsWithGenerator"}),
    Entry("slice/ListIndex", "slice", "builders.py:net", {"name": "ListIndex"}),
    Entry("slice/RangeOfTensor", "slice", "builders.py:net", {"name": "RangeOfTensor"}),
    Entry("slice/PadThroughCall", "slice", "builders.py:net", {"name": "PadThroughCall"}),
    Entry("slice/MaskFromReturn", "slice", "builders.py:net", {"name": "MaskFromReturn"}),
    Entry("slice/CausalEncoder", "slice", "builders.py:net", {"name": "CausalEncoder"}),
    Entry("slice/ResetsBuffer", "slice", "builders.py:net", {"name": "ResetsBuffer"}),
    Entry("slice/TakesLock", "slice", "builders.py:net", {"name": "TakesLock"}),
    Entry("slice/HooksOnce", "slice", "builders.py:net", {"name": "HooksOnce"}),
    Entry("slice/SetsRequiresGrad", "slice", "builders.py:net", {"name": "SetsRequiresGrad"}),
    Entry("slice/BuildsLayer", "slice", "builders.py:net", {"name": "BuildsLayer"}),
    Entry("slice/ConvertsLayer", "slice", "builders.py:net", {"name": "ConvertsLayer"}),
]
