"""Flowchart parsing benchmark and the text distances it scores node texts with."""
