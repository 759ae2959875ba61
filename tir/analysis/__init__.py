"""Analyses of IR trees: block access regions, well-formedness, FLOP counting.

Each analysis lives in its own module and is imported from there (for instance
``from tir.analysis.block_access import infer_access_regions``), so importing
this package stays cheap and the modules stay independent.
"""
