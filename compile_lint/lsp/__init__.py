"""The language server (`compile-lint server`); needs `pip install 'compile-lint[server]'`."""

# the code action kind of "fix all safe" (also what editors run on save); a literal, so
# that the server need not import lsprotocol's kinds to say it
FIX_ALL_KIND = "source.fixAll.compile-lint"
