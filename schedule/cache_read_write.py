"""Placeholder: this primitive family is being written."""


class CacheReadWriteMethods:
    pass
