"""Facts about a module that rules ask for: resolved names, compiled regions."""
