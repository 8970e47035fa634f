"""YAML read with positions: every value of a tournament file remembers its line.

PyYAML's composer keeps a start mark on every node; :func:`load_with_lines` builds the
plain Python value and, beside it, a map from each field's path (``("bots", 2, "cmd")``)
to the line it is written on, so a validation error can name the line.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import UsageError


class ConfigError(UsageError):
    """A tournament file is invalid: the message names the file, the line and the field."""


def field_name(path: tuple) -> str:
    """``("bots", 2, "cmd")`` -> ``bots[2].cmd``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


class Source:
    """A tournament file's text, its parsed value and the line of every field."""

    def __init__(self, path: Path, value, lines: dict[tuple, int]):
        self.path = path
        self.value = value
        self.lines = lines

    def line(self, path: tuple) -> int:
        """The line of ``path`` or of its nearest written parent (1-based)."""
        path = tuple(path)
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path, 1)

    def error(self, path: tuple, message: str) -> ConfigError:
        """A :class:`ConfigError` naming the file, the line of ``path`` and the field."""
        return ConfigError(f"{self.path}, line {self.line(path)}, field '{field_name(path)}': {message}")


def load_with_lines(path: Path) -> Source:
    """Read ``path`` as YAML, keeping the line of every field; errors name the file and line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tournament file ({exc.strerror})") from None
    # libyaml's parser when PyYAML has it: the same nodes and marks, about ten times faster
    # (a field of 10,000 bots reads in a second, not twenty)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        lines: dict[tuple, int] = {}
        value = _build(loader, node, (), lines, path) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise ConfigError(f"{path}, line {line}: not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    finally:
        loader.dispose()
    return Source(Path(path), value, lines)


_STR = "tag:yaml.org,2002:str"


def _scalar(loader, node) -> object:
    """A node's value; plain text straight from the node (what the constructor would return,
    at a fraction of its cost: a field of thousands of bots is mostly text)."""
    if node.tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    return loader.construct_object(node, deep=True)


def _build(loader, node, path: tuple, lines: dict, file) -> object:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out = {}
        for key_node, value_node in node.value:
            key = _scalar(loader, key_node)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                raise ConfigError(f"{file}, line {key_node.start_mark.line + 1}: a key must be a plain name")
            if key in out:
                raise ConfigError(f"{file}, line {key_node.start_mark.line + 1}, field "
                                  f"'{field_name(path + (key,))}': the key is written twice")
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _build(loader, value_node, path + (key,), lines, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), lines, file) for i, item in enumerate(node.value)]
    return _scalar(loader, node)
