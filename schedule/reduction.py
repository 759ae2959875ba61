"""Placeholder: this primitive family is being written."""


class ReductionMethods:
    pass
