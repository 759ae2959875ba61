"""Placeholder: this primitive family is being written."""


class ForKindMethods:
    pass
