"""Flowchart image rotation benchmark (0, 90, 180 or 270 degrees clockwise)."""
