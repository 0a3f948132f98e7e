"""Python types from a tool's JSON schemas, for :mod:`mcp_sync.functions`.

A schema becomes a small tree of :class:`Type` nodes, which turns both into runtime objects
(``Literal[...]``, ``list[...]``, ``TypedDict`` classes for arguments, pydantic models for
results) and into source text for a stub module, so that what ``help()`` shows and what mypy
checks are the same types.

The schema comes from the server, which may be hostile, so the work is bounded: a
``$ref`` is only ever followed inside the schema (anything else is ``Any``: nothing is
fetched), a ``$ref`` met again while it is being expanded (a tree of nodes) is
``dict[str, Any]``, nesting beyond :data:`MAX_DEPTH` and subschemas beyond
:data:`MAX_NODES` are ``Any``, and a listing making more than :data:`MAX_CLASSES` classes gets
``dict[str, Any]`` for the rest.
"""

from __future__ import annotations

import functools
import keyword
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Union
from urllib.parse import unquote

from ..protocol.schema_refs import resolve_local

__all__ = [
    "MAX_CLASSES",
    "MAX_DEPTH",
    "MAX_NODES",
    "STUB_NAMES",
    "ClassDef",
    "Namer",
    "Type",
    "Typer",
    "identifier",
    "model_attributes",
]

#: Deepest schema nesting turned into types; deeper is ``Any``.
MAX_DEPTH = 16
#: Most classes (TypedDicts, models) one listing of tools makes.
MAX_CLASSES = 500
#: Most subschemas looked at for one schema (each ``$ref`` followed again where it recurs):
#: beyond, ``Any``. Twenty ``$defs`` each twice ``anyOf`` the next would otherwise be a million.
MAX_NODES = 5_000

_PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
_RUNTIME_PRIMITIVES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool}
# what mypy lets stand for each (a bool is an int, an int a float)
_FITS: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
}


#: Every name a stub module binds or reads: its imports, its own definitions and the builtins its
#: types name. A tool, a result's field or a class of one of these names would shadow it in the
#: class body that declares it, so they are reserved for those.
STUB_NAMES = frozenset(
    {"annotations", "Any", "Literal", "Protocol", "cast", "pydantic", "NotRequired"}
    | {"Required", "TypedDict", "AbortSignal", "Client", "Tools", "bind"}
    | {"str", "int", "float", "bool", "list", "dict"}
)


@functools.lru_cache(maxsize=1)
def model_attributes() -> frozenset[str]:
    """The attributes of ``pydantic.BaseModel`` (``schema``, ``json``, ``model_dump``...),
    which a result's field of the same name would shadow: read from the pydantic installed,
    which is the one mypy checks the stubs against."""
    import pydantic

    return frozenset(name for name in dir(pydantic.BaseModel) if not name.startswith("_"))


def identifier(name: str, reserved: frozenset[str] = frozenset(), *, prefix: str) -> str:
    """``name`` as a Python identifier that begins with a letter: each character outside
    ``[A-Za-z0-9_]`` becomes ``_``; a name that then does not begin with a letter gets
    ``prefix`` in front (joined by ``_`` before a digit); a keyword or a ``reserved`` name
    gets a ``_`` behind. With ``prefix="tool"``: ``get-time`` -> ``get_time``, ``2d`` ->
    ``tool_2d``, ``_private`` -> ``tool_private``, ``__init__`` -> ``tool__init__``,
    ``class`` -> ``class_``.

    Never a leading underscore: such a name is private to Python (IPython hides it, pydantic
    refuses it as a field, a leading ``__`` is mangled inside a class body, a dunder belongs to
    Python's own protocols), and ``client.functions`` keeps ``_`` names for its own."""
    text = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not text[:1].isalpha():
        text = prefix + ("_" if text[:1].isdigit() else "") + text
    while keyword.iskeyword(text) or text in reserved:
        text += "_"
    return text


class Namer:
    """Unique identifiers (:func:`identifier`) for a set of names, the same whatever order
    they come in: the names are sorted first, and a name whose identifier is taken gets
    ``_2``, ``_3``... The one namer of tools, parameters and results' fields."""

    def __init__(
        self, names: list[str], reserved: frozenset[str] = frozenset(), prefix: str = "field"
    ) -> None:
        self.of: dict[str, str] = {}
        taken: set[str] = set(reserved)
        for name in sorted(set(names)):
            base = candidate = identifier(name, reserved, prefix=prefix)
            n = 1
            while candidate in taken:
                n += 1
                candidate = f"{base}_{n}"
            taken.add(candidate)
            self.of[name] = candidate


@dataclass
class ClassDef:
    """An object schema with properties: a TypedDict (arguments) or a pydantic model."""

    name: str
    doc: str
    model: bool  # a pydantic model (results), else a TypedDict (arguments)
    # (key on the wire, Python name, type, required, default (... for none), description)
    fields: list[tuple[str, str, Type, bool, Any, str]] = field(default_factory=list)
    runtime: Any = None


@dataclass
class Type:
    kind: Literal["any", "prim", "none", "literal", "list", "dict", "union", "class"]
    name: str = ""  # prim
    values: tuple[Any, ...] = ()  # literal
    args: tuple[Type, ...] = ()  # list, dict (the value), union
    cls: ClassDef | None = None

    def source(self) -> str:
        """The type as source text."""
        if self.kind == "any":
            return "Any"
        if self.kind == "none":
            return "None"
        if self.kind == "prim":
            return self.name
        if self.kind == "literal":
            return f"Literal[{', '.join(_literal(v) for v in self.values)}]"
        if self.kind == "list":
            return f"list[{self.args[0].source()}]"
        if self.kind == "dict":
            return f"dict[str, {self.args[0].source()}]"
        if self.kind == "union":
            return " | ".join(arg.source() for arg in self.args)
        assert self.cls is not None
        return self.cls.name

    def runtime(self) -> Any:
        """The type as a runtime object (classes are made by :meth:`Typer.runtime_classes`)."""
        if self.kind == "any":
            return Any
        if self.kind == "none":
            return type(None)
        if self.kind == "prim":
            return _RUNTIME_PRIMITIVES[self.name]
        if self.kind == "literal":
            return Literal.__getitem__(self.values)
        if self.kind == "list":
            return list[self.args[0].runtime()]  # type: ignore[misc]
        if self.kind == "dict":
            return dict[str, self.args[0].runtime()]  # type: ignore[misc]
        if self.kind == "union":
            return Union.__getitem__(tuple(arg.runtime() for arg in self.args))
        assert self.cls is not None and self.cls.runtime is not None
        return self.cls.runtime

    def optional(self) -> Type:
        """This type or None."""
        if self.kind in ("any", "none") or any(a.kind == "none" for a in self.args):
            return self
        if self.kind == "union":
            return Type("union", args=(*self.args, NONE))
        return Type("union", args=(self, NONE))

    def fits(self, value: Any) -> bool:
        """True if ``value``, written in source, is of this type as mypy sees it (the only
        defaults a signature shows; another is ``None`` and makes the type optional)."""
        if not plain_default(value):
            return False
        if self.kind == "any":
            return True
        if self.kind == "none":
            return value is None
        if self.kind == "prim":
            return isinstance(value, _FITS[self.name])
        if self.kind == "literal":
            return any(type(v) is type(value) and v == value for v in self.values)
        if self.kind == "union":
            return any(arg.fits(value) for arg in self.args)
        return False


ANY = Type("any")
NONE = Type("none")
OPEN_DICT = Type("dict", args=(ANY,))


def _literal(value: Any) -> str:
    return repr(value)


def _literal_value(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, bool))


def plain_default(value: Any) -> bool:
    """True for a default that reads back as itself in source (a JSON scalar)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return _literal_value(value)


class Typer:
    """Turns the schemas of one listing's tools into :class:`Type` trees; the classes it
    makes (TypedDicts for arguments, pydantic models for results) are kept, children before
    parents, with names unique across the listing and clear of every name a class body of
    the stub module declares: the tools (``reserved``), the models' fields and
    :data:`STUB_NAMES` (:meth:`finish` settles the names once all fields are known)."""

    def __init__(self, reserved: frozenset[str] = frozenset()) -> None:
        self.classes: list[ClassDef] = []
        self._names: set[str] = set(STUB_NAMES | reserved)
        self._left = MAX_NODES
        self._models = False

    def of(self, root: Any, schema: Any, hint: str, *, models: bool) -> Type:
        self._left = MAX_NODES
        self._models = models
        return self._type(root, schema, hint, 0, ())

    def _name(self, hint: str) -> str:
        camel = "".join(p[:1].upper() + p[1:] for p in re.split(r"[\W_]+", hint))
        base = identifier(camel, prefix="Schema")
        name, n = base, 1
        while name in self._names:
            n += 1
            name = f"{base}{n}"
        self._names.add(name)
        return name

    def finish(self) -> None:
        """Rename each class that a model's field (named after the class was) would shadow."""
        fields = {name for cls in self.classes if cls.model for _k, name, *_r in cls.fields}
        self._names |= fields
        for cls in self.classes:
            if cls.name in fields:
                cls.name = self._name(cls.name)

    def _type(self, root: Any, schema: Any, hint: str, depth: int, refs: tuple[str, ...]) -> Type:
        self._left -= 1
        if not isinstance(schema, dict) or depth > MAX_DEPTH or self._left < 0:
            return ANY
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in refs:  # a schema that contains itself
                return OPEN_DICT
            target = resolve_local(root, ref)
            if not isinstance(target, dict):
                return ANY
            name = unquote(ref.rsplit("/", 1)[-1]) if "/" in ref else ""
            return self._type(root, target, name or hint, depth + 1, (*refs, ref))
        if "const" in schema and _literal_value(schema["const"]):
            return Type("literal", values=(schema["const"],))
        enum = schema.get("enum")
        if isinstance(enum, list) and enum and all(_literal_value(v) for v in enum):
            # by type and value: 1 == True, and both may be listed
            unique = {(type(v), v): v for v in enum}
            return Type("literal", values=tuple(unique.values()))
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return _union([self._type(root, o, hint, depth + 1, refs) for o in options[:32]])
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self._type(root, all_of[0], hint, depth + 1, refs)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)][:8]
            return _union(
                [self._type(root, {**schema, "type": k}, hint, depth, refs) for k in kinds]
            )
        if kind in _PRIMITIVES:
            return Type("prim", name=_PRIMITIVES[kind])
        if kind == "null":
            return NONE
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict):
                return Type("list", args=(self._type(root, items, hint + "Item", depth + 1, refs),))
            return Type("list", args=(ANY,))
        if kind == "object" or (kind is None and "properties" in schema):
            return self._object(root, schema, hint, depth, refs)
        return ANY

    def _object(
        self, root: Any, schema: dict[str, Any], hint: str, depth: int, refs: tuple[str, ...]
    ) -> Type:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return Type("dict", args=(self._type(root, extra, hint, depth + 1, refs),))
            return OPEN_DICT
        if len(self.classes) >= MAX_CLASSES:
            return OPEN_DICT
        title = schema.get("title")
        name = self._name(title if isinstance(title, str) and title else hint)
        cls = ClassDef(name, "", self._models)
        description = schema.get("description")
        cls.doc = description if isinstance(description, str) else ""
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        keys = [k for k in properties if isinstance(k, str)]
        # a TypedDict's keys are the wire's; a model's fields are attributes, named here
        names = Namer(keys, STUB_NAMES | model_attributes()).of if self._models else {}
        for key in keys:
            sub = properties[key]
            kind = self._type(root, sub, f"{cls.name}_{key}", depth + 1, refs)
            sub = sub if isinstance(sub, dict) else {}
            default = sub.get("default", ...)
            if default is not ... and not kind.optional().fits(default):
                default = ...  # one the type does not take: None, as when there is none
            text = sub.get("description")
            text = text if isinstance(text, str) else ""
            cls.fields.append((key, names.get(key, key), kind, key in required, default, text))
        self.classes.append(cls)
        return Type("class", cls=cls)

    def runtime_classes(self) -> None:
        """Make the runtime class of each class, children first."""
        import pydantic
        import typing_extensions

        for cls in self.classes:
            if cls.model:
                fields: dict[str, Any] = {}
                for key, name, kind, required, default, text in cls.fields:
                    annotation = kind.runtime() if required else kind.optional().runtime()
                    value = ... if required else (None if default is ... else default)
                    fields[name] = (
                        annotation,
                        pydantic.Field(value, alias=key, description=text or None),
                    )
                config = pydantic.ConfigDict(
                    extra="allow", populate_by_name=True, protected_namespaces=()
                )
                cls.runtime = pydantic.create_model(
                    cls.name, __config__=config, __doc__=cls.doc or None, **fields
                )
            else:
                wrap = {True: typing_extensions.Required, False: typing_extensions.NotRequired}
                members = {
                    key: wrap[req][kind.runtime()] for key, _n, kind, req, _d, _t in cls.fields
                }
                made = typing_extensions.TypedDict(cls.name, members)  # type: ignore[misc]
                made.__doc__ = cls.doc or None
                cls.runtime = made
            cls.runtime.__module__ = "mcp_sync.functions"

    def source(self) -> list[str]:
        """Each class as source lines, children first."""
        lines: list[str] = []
        shadowing = STUB_NAMES | {cls.name for cls in self.classes}
        for cls in self.classes:
            lines.extend(["", ""])
            if cls.model:
                lines.append(f"class {cls.name}(pydantic.BaseModel):")
                lines.extend(_doc_lines(cls.doc, "    "))
                lines.append(
                    "    model_config = pydantic.ConfigDict(\n"
                    '        extra="allow", populate_by_name=True, protected_namespaces=()\n'
                    "    )"
                )
                for key, name, kind, required, default, text in cls.fields:
                    annotation = kind.source() if required else kind.optional().source()
                    value = "..." if required else "None" if default is ... else repr(default)
                    extra = f", description={text!r}" if text else ""
                    lines.append(
                        f"    {name}: {annotation} = pydantic.Field({value}, alias={key!r}{extra})"
                    )
                continue
            members = [
                (key, f"Required[{kind.source()}]" if req else f"NotRequired[{kind.source()}]")
                for key, _n, kind, req, _d, _t in cls.fields
            ]
            # a key declared in a class body would shadow a type named after it
            if all(_class_key(key) and key not in shadowing for key, _t in members):
                lines.append(f"class {cls.name}(TypedDict):")
                lines.extend(_doc_lines(cls.doc, "    "))
                lines.extend(f"    {key}: {text}" for key, text in members)
            else:
                body = ", ".join(f"{key!r}: {text}" for key, text in members)
                lines.append(f"{cls.name} = TypedDict({cls.name!r}, {{{body}}})")
        return lines


def _class_key(key: str) -> bool:
    return key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("__")


def _doc_lines(doc: str, indent: str) -> list[str]:
    if not doc:
        return []
    return [f"{indent}{docstring(doc)}"]


def docstring(text: str) -> str:
    """``text`` as a string literal fit to be a docstring (whatever quotes it holds)."""
    awkward = any(ord(c) < 32 and c not in "\n\t" for c in text) or "\\" in text
    if awkward or '"""' in text or text.endswith('"'):
        return repr(text)
    return f'"""{text}"""'


def _union(options: list[Type]) -> Type:
    flat: list[Type] = []
    for option in options:
        for one in option.args if option.kind == "union" else (option,):
            if one.kind == "any":
                return ANY
            if one.source() not in {f.source() for f in flat}:
                flat.append(one)
    if len(flat) == 1:
        return flat[0]
    return Type("union", args=tuple(flat)) if flat else ANY
