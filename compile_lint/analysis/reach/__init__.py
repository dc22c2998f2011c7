"""What compiled, traced and exported code reaches: per-file summaries and the
project-wide region index (`regions`), the value model that says what an expression
can hold across files (`values`), declared and recorded regions (`declared`), the defs
a site enters (`entries`), and the queries rules make of regions (`queries`)."""
