"""Schedule errors: data about what was violated, rendered with the script marked.

Every primitive family defines ``ScheduleError`` subclasses named after the
condition it checks (``NotOnlyChildError``, ``WrongFactorProductError``, ...),
each with TVM's key phrase for it where TVM has one (``tvm_phrase``).
An error carries a message and the nodes to point at; ``Schedule`` renders it
before it leaves, so ``str(error)`` always shows which primitive failed, why,
and the current script with the offending loop or block underlined.
"""

from __future__ import annotations

from tir import Block, For


class ScheduleError(RuntimeError):
    """A schedule primitive could not be applied; the schedule is unchanged.

    A RuntimeError, as TVM's ScheduleError (a TVMError) is, so code catching that carries over.

    ``tvm_phrase``: the key words of TVM's message for the same condition, which users grep
    for; a subclass sets it and the message gains a line quoting it (unless it says it already).
    """

    tvm_phrase: str | None = None
    # TVM's short constant text for this condition, shown at error_render_level="fast".
    fast_text: str | None = None

    def __init__(self, message: str, *nodes, primitive: str | None = None):
        phrase = self.tvm_phrase
        if phrase and phrase.lower() not in message.lower():
            message = f"{message}\n(TVM says: {phrase})"
        super().__init__(message)
        self.message = message
        self.nodes = tuple(n for n in nodes if n is not None)
        self.primitive = primitive
        self.rendered: str | None = None

    def render(self, mod, primitive: str | None = None, level: str = "detail") -> str:
        """Header, reason and the script of ``mod`` with ``self.nodes`` marked.

        ``level`` is TVM's error_render_level: "detail" (all of it), "fast" (one short line,
        no script) or "none" ("(not rendered)"); the error's ``args`` hold the same text.
        """
        from tir.script.printer import to_script

        self.primitive = primitive or self.primitive
        if level != "detail":
            first_line = self.message.splitlines()[0]
            self.rendered = "(not rendered)" if level == "none" else self.fast_text or first_line
            self.args = (self.rendered,)
            return self.rendered
        head = f"ScheduleError in {self.primitive}: " if self.primitive else "ScheduleError: "
        lines = [head + self.message]
        if mod is not None:
            try:
                script = to_script(mod, marks={n: self.message.splitlines()[0] for n in self.nodes})
            except Exception as exc:  # the error must still say what went wrong
                script = f"(the script could not be printed: {exc})"
            lines += ["", "The schedule is unchanged. Current program:", script]
        self.rendered = "\n".join(lines)
        return self.rendered

    def __str__(self) -> str:
        return self.rendered if self.rendered is not None else self.message


def describe(value) -> str:
    """How a message names a node or value: ``loop i``, ``block 'C'``, ``int 3``."""
    if isinstance(value, Block):
        return f"block {value.name!r}"
    if isinstance(value, For):
        return f"loop {value.loop_var.name}"
    return f"{type(value).__name__} {value!r}"


class StaleHandleError(ScheduleError):
    """A loop or block handle whose node was removed by an earlier primitive."""


class NotFoundError(ScheduleError):
    """No block of that name, or a handle of the wrong kind."""


class UnknownHandleError(StaleHandleError, NotFoundError, IndexError):
    """A handle this schedule does not hold: forgotten by ``remove_rv`` or made by another
    schedule. Also an IndexError, as TVM's symbol-table lookup raises."""


FORGOTTEN_BY_REMOVE_RV = "the handle was removed by remove_rv"


class BlockNameNotFoundError(NotFoundError):
    """get_block of a name no block of the function has."""

    fast_text = "Cannot find a block with the specified name"


ERROR_RENDER_LEVELS = ("detail", "fast", "none")


class ArgumentError(ScheduleError):
    """An argument of the wrong type or value (checked before any rewrite)."""
