"""Placeholder: this primitive family is being written."""


class AnnotateMethods:
    pass
