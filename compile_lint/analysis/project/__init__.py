"""What one file's rules may know beyond the file: the project's other files, read
through the engine's handle so the cache records them (`context.Project`,
`context.Sources`, `context.path_for_module`), the calls of a def anywhere in the
project (`calls`), and the file listing a search depends on (`listing`)."""
