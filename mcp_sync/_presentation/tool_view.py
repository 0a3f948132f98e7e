"""The model-facing view of a tool: what a model may see of a listed tool, decided in one place.

:func:`model_view` is the one function every tool shape for a model is built from (the OpenAI
and Anthropic shapes of :mod:`mcp_sync.llm`, the framework adapters of
:mod:`mcp_sync.integrations`, ``client.functions``): whether a model may see the tool at all
(:func:`model_visible`: MCP Apps tools for the app's UI are not), and its name, description and
schemas without what a person cannot see but a model reads (:func:`clean_tool`). A model's call,
made in those clean terms, goes back to the server in its own (:meth:`ModelTool.arguments`).

The names are public from :mod:`mcp_sync.llm`.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from .._rules.warn import warn
from ..errors import HiddenCharactersWarning
from ..protocol.types import Tool

__all__ = [
    "ModelTool",
    "clean_text",
    "clean_tool",
    "indexed_views",
    "model_tools",
    "model_view",
    "model_visible",
    "tool_input_schema",
    "unique",
    "view_names",
    "view_of",
]


def unique(
    wanted: list[str], *, first: Iterable[int] | None = None, limit: int | None = None
) -> list[str]:
    """``wanted`` made unique by suffixing ``_2``, ``_3``, ...: the names claim theirs in the
    order of the indexes ``first`` (else the list's), and a suffixed name never takes a name
    another one wants."""
    reserved = set(wanted)
    taken: set[str] = set()
    result = list(wanted)
    for index in range(len(wanted)) if first is None else first:
        name = candidate = wanted[index]
        number = 1
        while candidate in taken or (number > 1 and candidate in reserved):
            number += 1
            suffix = f"_{number}"
            candidate = (name if limit is None else name[: limit - len(suffix)]) + suffix
        taken.add(candidate)
        result[index] = candidate
    return result


def model_visible(tool: Tool) -> bool:
    """Whether a model may see ``tool``: not when it is an MCP Apps tool whose
    ``_meta.ui.visibility`` leaves out ``"model"`` (it is for the app's UI to call). A tool
    with no such list is visible (the MCP Apps default is ``["model", "app"]``); one whose
    list is malformed (not a list of strings) is not."""
    ui = (tool.meta or {}).get("ui")
    if not isinstance(ui, dict) or ui.get("visibility") is None:
        return True
    visibility = ui["visibility"]
    if isinstance(visibility, str):
        visibility = [visibility]
    # a list the server got wrong hides the tool: offering an app-only tool would let the
    # model do what the app exists to have a person decide
    return isinstance(visibility, list) and "model" in visibility


def model_tools(tools: Iterable[Tool], *, include_app_only: bool = False) -> list[Tool]:
    """The tools a model may see (:func:`model_visible`), in order.
    ``include_app_only=True`` keeps the app-only tools too. :func:`model_view` gives them as
    a model sees them."""
    return [tool for tool in tools if include_app_only or model_visible(tool)]


def tool_input_schema(tool: Tool) -> dict[str, Any]:
    """The tool's input schema as LLM APIs want it: an object schema with ``properties``
    always present and no ``$schema`` (some LLM APIs refuse it); a copy, ``$ref`` and
    everything else left as the server wrote it."""
    schema = copy.deepcopy(tool.input_schema) if isinstance(tool.input_schema, dict) else {}
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    schema.pop("$schema", None)
    return schema


_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _hidden(char: str) -> bool:
    """A character a person does not see: a tag character (U+E0000 to U+E007F), a variation
    selector (U+180B to U+180F, U+FE00 to U+FE0F, U+E0100 to U+E01EF), a format character
    (category Cf: bidirectional controls, zero-width characters, the BOM, ...) or a control
    character other than tab and newlines."""
    code = ord(char)
    category = unicodedata.category(char)
    return (
        category == "Cf"
        or 0xE0000 <= code <= 0xE01EF
        or 0xFE00 <= code <= 0xFE0F
        or 0x180B <= code <= 0x180F
        or (category == "Cc" and char not in "\t\n\r")
    )


def clean_text(text: str) -> tuple[str, str]:
    """``text`` without the characters a person cannot see but a model reads (Unicode tag
    characters, variation selectors, bidirectional controls, zero-width and other format
    characters, control characters but tab and newlines), and the characters removed, in
    order."""
    if text.isascii() and not _CONTROLS.search(text):
        return text, ""
    removed = "".join(char for char in text if _hidden(char))
    if not removed:
        return text, ""
    return "".join(char for char in text if not _hidden(char)), removed


class _Cleaning:
    """Cleans one tool, keeping what it stripped per field (for the warning) and, for the
    texts a model sends back (property names, ``enum`` and ``const`` values), the server's
    own spelling of each text it changed."""

    def __init__(self) -> None:
        self.found: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self.values: dict[str, str] = {}

    def text(self, text: str, field: str) -> str:
        cleaned, removed = clean_text(text)
        if removed:
            self.found[field] = self.found.get(field, "") + removed
        return cleaned

    def schema(self, value: Any, path: str, *, echoed: bool = False) -> Any:
        """A copy of a JSON schema with every key and every string cleaned."""
        if isinstance(value, str):
            cleaned = self.text(value, path)
            if echoed and cleaned != value:
                self.values.setdefault(cleaned, value)
            return cleaned
        if isinstance(value, list):
            return [self.schema(v, f"{path}[{i}]", echoed=echoed) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        copied: dict[Any, Any] = {}
        for key, item in value.items():
            name = key
            if isinstance(key, str):
                name, removed = clean_text(key)
                if removed:
                    if name in value:  # the server's clean key of that name wins
                        continue
                    self.found[f"{path}.{name} (key)"] = removed
                    self.keys.setdefault(name, key)
            copied[name] = self.schema(item, f"{path}.{name}", echoed=key in ("enum", "const"))
        return copied


def _cleaned(tool: Tool, clean: bool) -> tuple[Tool, _Cleaning]:
    cleaning = _Cleaning()
    if not clean:
        return tool, cleaning
    changes: dict[str, Any] = {"name": cleaning.text(tool.name, "name")}
    for field in ("title", "description"):
        value = getattr(tool, field)
        if isinstance(value, str):
            changes[field] = cleaning.text(value, field)
    changes["input_schema"] = cleaning.schema(tool.input_schema, "inputSchema")
    if tool.output_schema is not None:
        changes["output_schema"] = cleaning.schema(tool.output_schema, "outputSchema")
    if not cleaning.found:
        return tool, cleaning
    details = "; ".join(
        f"{field}: {' '.join(sorted({f'U+{ord(c):04X}' for c in removed}))}"
        for field, removed in cleaning.found.items()
    )
    count = sum(len(removed) for removed in cleaning.found.values())
    warn(
        HiddenCharactersWarning(
            f"tool {changes['name']!r}: stripped {count} invisible character(s) before it "
            f"reaches a model ({details})"
        )
    )
    return tool.model_copy(update=changes), cleaning


def clean_tool(tool: Tool, *, clean: bool = True) -> Tool:
    """The tool with what a person cannot see stripped (:func:`clean_text`) from its name,
    title and description and from every key and string of its schemas: property names,
    ``enum`` and ``const`` values, defaults, examples, descriptions and titles, at any depth.

    What was stripped is reported by a :class:`~mcp_sync.errors.HiddenCharactersWarning`
    naming the tool, each field and the code points. ``clean=False`` returns ``tool``
    unchanged. :func:`model_view` builds on this; every tool shape for a model comes from
    :func:`model_view`.
    """
    return _cleaned(tool, clean)[0]


@dataclasses.dataclass(frozen=True)
class ModelTool:
    """A listed tool as a model may see it: what :func:`model_view` gives, and what every
    tool shape for a model is built from."""

    tool: Tool
    """The tool as the server listed it: call it by ``tool.name``."""
    name: str
    """The name without hidden characters, unique in its listing: a tool whose name needed
    cleaning and then equals another's gets ``_2`` (the other keeps it). Each framework's own
    rule applies on top (``[A-Za-z0-9_-]`` for LLM APIs, identifiers for Python callables)."""
    description: str | None
    """The cleaned description, else the cleaned title; ``None`` when it has neither."""
    input_schema: dict[str, Any]
    """The cleaned input schema as LLM APIs want it (see :func:`tool_input_schema`)."""
    output_schema: dict[str, Any] | None
    """The cleaned output schema, if the tool has one."""
    _keys: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False)
    _values: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False)

    def arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A model's arguments as the server expects them: each key that is a property name
        the cleaning changed, and each string equal to an ``enum`` or ``const`` value it
        changed, is put back as the server wrote it (a copy; for a tool that needed no
        cleaning, the same keys and values)."""
        if not self._keys and not self._values:
            return dict(arguments)
        restored: dict[str, Any] = self._restore(dict(arguments))
        return restored

    def _restore(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {self._keys.get(k, k): self._restore(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._restore(item) for item in value]
        if isinstance(value, str):
            return self._values.get(value, value)
        return value


def model_view(
    tools: Iterable[Tool],
    *,
    clean: bool = True,
    include_app_only: bool = False,
    names: Collection[str] | None = None,
) -> list[ModelTool]:
    """The tools as a model may see them, in order: the one function every tool shape for a
    model is built from (:func:`openai_tools`, :func:`anthropic_tools`, ``Tool.to_openai()``,
    the adapters of :mod:`mcp_sync.integrations`, ``client.functions``).

    - app-only tools (:func:`model_visible`) are left out unless ``include_app_only=True``;
    - names, descriptions and schemas are cleaned (:func:`clean_tool`) unless ``clean=False``;
    - names are unique in the list given (app-only tools included, so that they stay the
      same whichever tools are shown);
    - ``names`` (MCP names) keeps only those tools, named as in the whole list.

    A model calls a tool by its :attr:`ModelTool.name` with arguments in the cleaned schema's
    terms: call ``view.tool.name`` with ``view.arguments(arguments)``.
    """
    return [view for _index, view in indexed_views(list(tools), clean, include_app_only, names)]


def indexed_views(
    tools: list[Tool],
    clean: bool,
    include_app_only: bool,
    chosen: Collection[str] | None = None,
) -> list[tuple[int, ModelTool]]:
    """:func:`model_view`'s views, each with its tool's index in ``tools`` (for a name made
    over the whole list elsewhere, as :func:`mcp_sync.llm.llm_tool_names` does)."""
    views = []
    for index, (tool, name) in enumerate(zip(tools, view_names(tools, clean), strict=True)):
        if (include_app_only or model_visible(tool)) and (chosen is None or tool.name in chosen):
            shown, cleaning = _cleaned(tool, clean)
            view = ModelTool(
                tool=tool,
                name=name,
                description=shown.description or shown.title or None,
                input_schema=tool_input_schema(shown),
                output_schema=shown.output_schema,
                _keys=cleaning.keys,
                _values=cleaning.values,
            )
            views.append((index, view))
    return views


def view_names(tools: Sequence[Tool], clean: bool) -> list[str]:
    """Each tool's :attr:`ModelTool.name` in ``tools``, without cleaning anything else."""
    wanted = [(clean_text(tool.name)[0] if clean else tool.name) or "tool" for tool in tools]
    # a name that needed no cleaning claims it first: a look-alike with hidden characters
    # added never takes a real tool's name
    first = sorted(range(len(tools)), key=lambda index: wanted[index] != tools[index].name)
    return unique(wanted, first=first)


def view_of(tool: Tool, clean: bool) -> ModelTool:
    """One tool as a model may see it, app-only or not (the caller chose it)."""
    return indexed_views([tool], clean, include_app_only=True)[0][1]
