"""Flowchart benchmarks: classification, rotation and parsing (docs/flowcharts.md)."""
