"""`nn.Module` classes and their Python state: which classes are modules and what
they build and store (`classes`), and the Python attributes compiled or traced code
reads that change after `__init__` (`attr_changes`)."""
