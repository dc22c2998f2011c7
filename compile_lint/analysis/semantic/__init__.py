"""The semantic model of one file: its tree walks, the names it imports and binds
(`names.NameTable`), what a def's signature says (`signatures`), its scopes and what a name holds where it is used
(`model.SemanticModel`, `model.FileBindings`), and the facts rules ask about it,
computed once per file (`facts.ModuleFacts`, `facts.Fact`)."""
