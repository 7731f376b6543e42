"""Experiments: a lab's measurement matrix run end to end, summarised per cell, compared by ratios. No Qt."""
