"""Placeholder: this primitive family is being written."""


class SamplingMethods:
    pass
