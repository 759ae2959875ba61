"""Placeholder: this primitive family is being written."""


class ComputeAtMethods:
    pass
