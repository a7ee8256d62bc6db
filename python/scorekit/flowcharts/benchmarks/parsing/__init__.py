"""The flowchart parsing benchmark: data model, file checks, node matching and the benchmark."""
