"""Placeholder: this primitive family is being written."""


class LoopTransformationMethods:
    pass
