"""The language server (`compile-lint server`): the protocol itself is in protocol.py."""

# the code action kind of "fix all safe" (also what editors run on save); a literal, so
# that the server need not import the code action machinery to say it
FIX_ALL_KIND = "source.fixAll.compile-lint"
