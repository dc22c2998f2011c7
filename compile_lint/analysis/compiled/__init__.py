"""Compiled callables and what holds them: the compile calls of a file and their
options (`calls`), names and attributes bound to compiled callables (`values`), the
`torch.compile` wrapper module and who holds one (`wrappers`), what later code can
observe when a name is rebound to its compiled wrapper (`rebinding`), and how long
CUDA-graph outputs live (`output_lifetimes`)."""
