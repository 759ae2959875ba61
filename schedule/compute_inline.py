"""Placeholder: this primitive family is being written."""


class ComputeInlineMethods:
    pass
