"""``trio-mcp completion bash|zsh|fish``: a shell completion script, generated from the
command line parser itself, so that a new command or option completes without anyone
writing it twice.

    source <(trio-mcp completion bash)                          # ~/.bashrc
    source <(trio-mcp completion zsh)                           # ~/.zshrc
    trio-mcp completion fish > ~/.config/fish/completions/trio-mcp.fish

Commands complete after ``trio-mcp``; a command's options (and the choices of options that
have them, such as ``--log-level``) complete after it; anything else completes as file
names.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import Any

__all__ = ["SHELLS", "add_completion_command", "completion_script"]

SHELLS = ("bash", "zsh", "fish")


def add_completion_command(commands: Any) -> None:
    """Register ``completion`` on the ``trio-mcp`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for the shell: `source <(trio-mcp completion "
        "bash)` in ~/.bashrc (zsh likewise), or save the fish one under "
        "~/.config/fish/completions/trio-mcp.fish.",
    )
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(timeout=0.0)


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action
        for action in parser._actions
        if action.option_strings and action.help != argparse.SUPPRESS
    ]


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser``'s program for ``shell``."""
    builders: dict[str, Callable[[argparse.ArgumentParser], str]] = {
        "bash": _bash,
        "zsh": _zsh,
        "fish": _fish,
    }
    return builders[shell](parser)


def _bash(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    cases = []
    for name, sub in commands.items():
        words = " ".join(o for action in _options(sub) for o in action.option_strings)
        choices = [
            f"            {'|'.join(action.option_strings)}) "
            f"COMPREPLY=($(compgen -W {shlex.quote(' '.join(map(str, action.choices)))} "
            '-- "$cur")); return;;'
            for action in _options(sub)
            if action.choices
        ]
        cases.append(
            f"        {name})\n"
            f'            case "$prev" in\n'
            + "\n".join(choices)
            + ("\n" if choices else "")
            + "            esac\n"
            f'            if [[ "$cur" == -* ]]; then\n'
            f'                COMPREPLY=($(compgen -W {shlex.quote(words)} -- "$cur"))\n'
            f"            else\n"
            f'                COMPREPLY=($(compgen -f -- "$cur"))\n'
            f"            fi;;"
        )
    top = " ".join(commands) + " --help --version"
    return (
        "# trio-mcp completion for bash (generated from its parser)\n"
        "_trio_mcp() {\n"
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"\n'
        "    if (( COMP_CWORD == 1 )); then\n"
        f'        COMPREPLY=($(compgen -W {shlex.quote(top)} -- "$cur")); return\n'
        "    fi\n"
        '    case "${COMP_WORDS[1]}" in\n' + "\n".join(cases) + "\n    esac\n"
        "}\n"
        "complete -F _trio_mcp trio-mcp\n"
    )


def _zsh(parser: argparse.ArgumentParser) -> str:
    # zsh runs bash completion functions through bashcompinit: one generated script.
    return (
        "# trio-mcp completion for zsh (generated from its parser)\n"
        "autoload -U +X compinit && compinit\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + _bash(parser)
    )


def _fish(parser: argparse.ArgumentParser) -> str:
    lines = [
        "# trio-mcp completion for fish (generated from its parser)",
        "complete -c trio-mcp -f",
    ]
    helps = _helps(parser)
    for name, sub in _commands(parser).items():
        lines.append(
            f"complete -c trio-mcp -n __fish_use_subcommand -a {name} "
            f"-d {shlex.quote(helps.get(name, ''))}"
        )
        for action in _options(sub):
            flags = " ".join(
                f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}"
                for o in action.option_strings
            )
            extra = ""
            if action.choices:
                extra = f" -x -a {shlex.quote(' '.join(map(str, action.choices)))}"
            elif action.nargs != 0:
                extra = " -r"
            lines.append(
                f"complete -c trio-mcp -n '__fish_seen_subcommand_from {name}' {flags}{extra} "
                f"-d {shlex.quote((action.help or '').split(';')[0][:60])}"
            )
    return "\n".join(lines) + "\n"
