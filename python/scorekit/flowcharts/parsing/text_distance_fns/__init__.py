"""Text distances for flowchart texts: raw and normalised Levenshtein, and a numbers-only variant."""
