"""Flowchart image classification benchmarks (binary, multiclass, any saved labels)."""
