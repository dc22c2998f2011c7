"""The language server (`compile-lint server`); needs `pip install 'compile-lint[server]'`."""
