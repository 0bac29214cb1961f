"""A click group whose subcommands are imported only when one of them runs.

``gavel --help`` and ``gavel decide …`` should cost the interpreter and the modules that one
command needs, not the whole program: the workstation pulls in Textual, agreement statistics
pull in numpy, the format readers pydantic models. So the group knows each subcommand by an
import path and a one-line help, and lists them from that table without importing anything.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy`` maps a command name to ``("package.module:attribute", "one-line help")``; the
    table's order is the order ``--help`` lists them in."""

    def __init__(
        self,
        name: str | None = None,
        *,
        lazy: Mapping[str, tuple[str, str]] | None = None,
        **attrs: Any,
    ) -> None:
        super().__init__(name, **attrs)
        self.lazy: dict[str, tuple[str, str]] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(name for name in self.commands if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.lazy:
            return self.commands.get(cmd_name)
        module_name, _, attribute = self.lazy[cmd_name][0].partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command) or command.name != cmd_name:
            raise TypeError(f"{self.lazy[cmd_name][0]} is not the click command {cmd_name!r}")
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (
                name,
                self.lazy[name][1]
                if name in self.lazy
                else self.commands[name].get_short_help_str(200),
            )
            for name in self.list_commands(ctx)
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
