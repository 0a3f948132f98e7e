"""Skills (extension ``io.modelcontextprotocol/skills``, SEP-2640), the client side.

::

    for skill in client.skills.list():            # entries only: no file is read
        print(skill.name, "-", skill.description)
    pdf = client.skills.load("skill://pdf-processing/SKILL.md")
    print(pdf.text)                                # SKILL.md, verified
    forms = pdf.read_text("references/FORMS.md")   # a listed file, verified

What the extension asks of a client, and how this module does it:

- **Lazy retrieval.** Listing reads no file. :meth:`Skills.load` reads ``SKILL.md``;
  :meth:`LoadedSkill.read` reads one more file when asked.
- **Verification on read.** Every file read is checked against the held entry: its size and
  its ``sha256:`` digest. The loaded ``SKILL.md``'s YAML frontmatter is compared field by
  field with the entry's ``frontmatter``. A file the entry does not list is refused. Any
  mismatch raises :class:`~mcp_sync.errors.SkillVerificationError` and the content is not
  returned (re-fetch the entry with :meth:`Skills.get` if the skill changed).
- **Bounded parsing.** Frontmatter is refused (a verification error, before anything is
  built from it) past :data:`MAX_FRONTMATTER_CHARS` characters, :data:`MAX_FRONTMATTER_DEPTH`
  levels of nesting, or :data:`MAX_FRONTMATTER_VALUES` values once YAML aliases are
  expanded; an alias that refers to itself is refused too. A small file cannot cost a lot.
- **Paths stay inside the skill.** A path or URI with a ``.`` or ``..`` segment (also
  percent-encoded), an empty segment, a backslash-separated one, or a control character
  (NUL) is refused, as is an entry that lists a file outside the skill's root.
- **Dynamic skills** (``"resources": "dynamic"``) publish no digests, so nothing can be
  verified; loading one needs ``allow_dynamic=True``.
- **Origin.** A skill belongs to the server that served it; :attr:`LoadedSkill.origin` is
  what :meth:`LoadedSkill.for_model` tags its text with. Frontmatter such as
  ``allowed-tools`` is data here: nothing in it is acted on.

:class:`Skills` is a client's ``client.skills``: the extension's requests.

Parsing frontmatter needs PyYAML (``pip install 'mcp-sync-client[skills]'``).
"""

from __future__ import annotations

import base64
import builtins
import datetime
import hashlib
import posixpath
import re
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

from ._client import calls as _calls
from ._connection.connection import Connection, ProgressHandler
from .abort import AbortSignal
from .errors import McpError, SkillVerificationError
from .protocol import methods
from .protocol.types import ReadResourceResult, Skill, SkillFile

__all__ = [
    "MAX_FRONTMATTER_CHARS",
    "MAX_FRONTMATTER_DEPTH",
    "MAX_FRONTMATTER_VALUES",
    "LoadedSkill",
    "Skills",
    "parse_frontmatter",
    "verify_content",
]

#: Bounds on a SKILL.md's frontmatter (real ones are a few hundred bytes, a few levels deep).
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_FRONTMATTER_DEPTH = 32
#: Values (scalars and collections) once every YAML alias is expanded: what comparing and
#: converting the frontmatter costs.
MAX_FRONTMATTER_VALUES = 10_000

_FRONTMATTER = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class Skills:
    """The skills extension's requests of one client (``client.skills``)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def list(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> builtins.list[Skill]:
        """Every skill the server lists (all pages): entries only, no file is read.

        A listing may be partial; :meth:`get` reaches any skill by URI. ``timeout`` bounds
        the whole listing, all pages together; progress renews it.
        """
        return _calls.every(self._connection, methods.SKILLS_LIST, timeout, signal, on_progress)

    def get(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> Skill:
        """The current entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``)."""
        params = {"uri": uri}
        row = methods.SKILLS_GET
        return _calls.call(self._connection, row, params, timeout, signal, on_progress).skill

    def load(
        self,
        skill: Skill | str,
        *,
        allow_dynamic: bool = False,
        origin: str | None = None,
        timeout: float | None = None,
    ) -> LoadedSkill:
        """Load a skill: read its ``SKILL.md`` and verify it against the entry.

        ``skill`` is an entry from :meth:`list` or the URI of a ``SKILL.md`` (its entry is
        fetched with :meth:`get` first). Raises :class:`~mcp_sync.errors.SkillVerificationError`
        when the content does not match the entry (size, digest or frontmatter); a dynamic
        skill needs ``allow_dynamic``. ``origin`` labels the server in
        :meth:`LoadedSkill.for_model` (default: the server's name).
        """
        entry = self.get(skill, timeout=timeout) if isinstance(skill, str) else skill
        if origin is None:
            info = self._connection.initialized().server_info
            origin = info.name if info else "server"

        def read(uri: str) -> ReadResourceResult:
            params = {"uri": uri}
            return _calls.call(self._connection, methods.RESOURCES_READ, params, timeout, None)

        return load(entry, origin, read, allow_dynamic=allow_dynamic)


class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified; its other files are read on demand.

    ``skill`` is the held entry every read is verified against; ``text`` is ``SKILL.md`` as
    served; ``origin`` names the server it came from.
    """

    def __init__(
        self,
        skill: Skill,
        text: str,
        origin: str,
        read_resource: Callable[[str], ReadResourceResult],
    ) -> None:
        self.skill = skill
        self.text = text
        self.origin = origin
        self._read_resource = read_resource
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def verified(self) -> bool:
        """False for a dynamic skill: its content could not be checked."""
        return not self.skill.is_dynamic

    @property
    def instructions(self) -> str:
        """``SKILL.md`` without its frontmatter."""
        match = _FRONTMATTER.match(self.text.removeprefix("\ufeff"))
        return self.text[match.end() :].lstrip("\r\n") if match else self.text

    @property
    def files(self) -> list[str]:
        """The paths of the skill's other files, relative to its root (empty when dynamic)."""
        if self.skill.is_dynamic:
            return []
        root = self.skill.root + "/"
        return [f.uri[len(root) :] for f in self._listed() if f.uri != self.skill.uri]

    def read(self, path: str) -> bytes:
        """The bytes of one of the skill's files, by path relative to the skill's root (as
        ``SKILL.md`` refers to it) or by full URI, verified against the held entry."""
        uri = self.resolve(path)
        with self._lock:
            cached = self._cache.get(uri)
        if cached is not None:
            return cached
        listed = None
        if not self.skill.is_dynamic:
            listed = next((f for f in self._listed() if f.uri == uri), None)
            if listed is None:
                raise SkillVerificationError(
                    uri, "not listed in the skill's entry (refresh it with skills.get())"
                )
        data = content_bytes(self._read_resource(uri), uri)
        if listed is not None:
            verify_content(listed, data)
        with self._lock:
            self._cache[uri] = data
        return data

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        """:meth:`read`, decoded."""
        return self.read(path).decode(encoding)

    def resolve(self, path: str) -> str:
        """The URI of ``path`` (relative to the skill's root, or already a URI) inside the
        skill; raises :class:`SkillVerificationError` for a path that leaves the skill."""
        root = self.skill.root
        if "://" in path:
            uri = path
        else:
            relative = posixpath.normpath(path)
            if relative.startswith("../") or relative in ("..", ".") or relative.startswith("/"):
                raise SkillVerificationError(f"{root}/{path}", "the path leaves the skill")
            uri = f"{root}/{relative}"
        problem = path_problem(uri, root)
        if problem is not None:
            raise SkillVerificationError(uri, problem)
        return uri

    def for_model(self) -> str:
        """The skill's text as it should enter a model's context: tagged with its origin,
        since skill content is untrusted input from that server."""
        return (
            f'<skill name="{self.name}" origin="{self.origin}" uri="{self.skill.uri}">\n'
            f"{self.text}\n</skill>"
        )

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<LoadedSkill {self.skill.uri} from {self.origin!r}>"

    def _listed(self) -> list[SkillFile]:
        assert not isinstance(self.skill.resources, str)
        return self.skill.resources


def load(
    skill: Skill,
    origin: str,
    read_resource: Callable[[str], ReadResourceResult],
    *,
    allow_dynamic: bool,
) -> LoadedSkill:
    """Read ``skill``'s ``SKILL.md``, verify it against the entry, and return the loaded
    skill (see the module docstring)."""
    if skill.is_dynamic and not allow_dynamic:
        raise SkillVerificationError(
            skill.uri, "the skill is dynamic (no digests to verify): pass allow_dynamic=True"
        )
    problem = _segments_problem(skill.uri.partition("://")[2])
    if problem is not None:
        raise SkillVerificationError(skill.uri, f"the skill's URI is not usable: {problem}")
    listed = None
    if not skill.is_dynamic:
        assert not isinstance(skill.resources, str)
        for file in skill.resources:
            if file.uri == skill.uri:  # its own SKILL.md: the URI was checked above
                continue
            problem = path_problem(file.uri, skill.root)
            if problem is not None:
                raise SkillVerificationError(
                    file.uri, f"the entry lists a file outside the skill ({problem})"
                )
        listed = next((f for f in skill.resources if f.uri == skill.uri), None)
        if listed is None:
            raise SkillVerificationError(skill.uri, "the entry does not list its own SKILL.md")
    data = content_bytes(read_resource(skill.uri), skill.uri)
    if listed is not None:
        verify_content(listed, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillVerificationError(skill.uri, "SKILL.md is not UTF-8 text") from None
    served = parse_frontmatter(text, skill.uri)
    if served is None:
        raise SkillVerificationError(skill.uri, "SKILL.md has no YAML frontmatter")
    differing = sorted(
        key
        for key in set(served) | set(skill.frontmatter)
        if served.get(key) != skill.frontmatter.get(key)
    )
    if differing:
        raise SkillVerificationError(
            skill.uri, f"frontmatter differs from the entry's in: {', '.join(differing)}"
        )
    return LoadedSkill(skill, text, origin, read_resource)


def verify_content(listed: SkillFile, data: bytes) -> None:
    """Raise :class:`SkillVerificationError` unless ``data`` has the listed size and digest."""
    if len(data) != listed.size:
        raise SkillVerificationError(
            listed.uri, f"size is {len(data)} bytes, the entry says {listed.size}"
        )
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != listed.digest.lower():
        raise SkillVerificationError(
            listed.uri, f"digest is {digest}, the entry says {listed.digest}"
        )


def content_bytes(result: ReadResourceResult, uri: str) -> bytes:
    """The raw bytes a ``resources/read`` result carries for ``uri``."""
    contents = [c for c in result.contents if c.uri == uri] or result.contents[:1]
    if not contents:
        raise SkillVerificationError(uri, "the server returned no content")
    content = contents[0]
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    blob = getattr(content, "blob", None)
    if isinstance(blob, str):
        return base64.b64decode(blob)
    raise SkillVerificationError(uri, "the server returned neither text nor a blob")


def path_problem(uri: str, root: str) -> str | None:
    """Why ``uri`` is not a file of the skill at ``root``, or None when it is."""
    if not uri.startswith(root + "/"):
        return f"not a file of the skill at {root}"
    return _segments_problem(uri[len(root) + 1 :])


def _segments_problem(path: str) -> str | None:
    """Why a URI's path would not name the file it seems to on a server that resolves dot
    segments, decodes percent-escapes, or takes a backslash or NUL for what they are there."""
    for text in (path, urllib.parse.unquote(path)):
        if any(ord(char) < 0x20 or char == "\x7f" for char in text):
            return "the path holds a control character (NUL or the like)"
        segments = text.replace("\\", "/").split("/")
        if any(segment in ("", ".", "..") for segment in segments):
            return "the path leaves the skill (an empty, . or .. segment)"
    return None


def parse_frontmatter(text: str, uri: str = "SKILL.md") -> dict[str, Any] | None:
    """The YAML frontmatter of a ``SKILL.md`` as JSON values, or None if it has none (or it
    is not YAML). Raises :class:`SkillVerificationError` (naming ``uri``) for frontmatter
    past the module's bounds on size, nesting and alias expansion."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        return None
    try:
        import yaml
    except ImportError:  # pragma: no cover - depends on the environment
        raise McpError(
            "loading a skill needs PyYAML: pip install 'mcp-sync-client[skills]'"
        ) from None
    source = match.group(1)
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise SkillVerificationError(
            uri, f"the frontmatter is larger than {MAX_FRONTMATTER_CHARS} characters"
        )
    try:
        # the parser is iterative: a depth check on its events comes before the composer,
        # which recurses once per level
        depth = 0
        for event in yaml.parse(source, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_FRONTMATTER_DEPTH:
                    raise SkillVerificationError(uri, _TOO_DEEP)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        loader = yaml.SafeLoader(source)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expansion(node, uri)
            value = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError:
        return None
    return _as_json(value) if isinstance(value, dict) else None


_TOO_DEEP = f"the frontmatter is nested deeper than {MAX_FRONTMATTER_DEPTH} levels"


def _check_expansion(root: Any, uri: str) -> None:
    """Raise unless the node graph, aliases expanded, is a tree of bounded size and depth.

    Aliases make the graph share nodes: what is counted is every visit, as building and
    comparing the values will make them, and the walk stops at the bound.
    """
    import yaml

    count = 0
    on_path: set[int] = set()

    def visit(node: Any, depth: int) -> None:
        nonlocal count
        count += 1
        if count > MAX_FRONTMATTER_VALUES:
            raise SkillVerificationError(
                uri,
                f"the frontmatter holds more than {MAX_FRONTMATTER_VALUES} values once its"
                " YAML aliases are expanded",
            )
        if depth > MAX_FRONTMATTER_DEPTH:
            raise SkillVerificationError(uri, _TOO_DEEP)
        if isinstance(node, yaml.ScalarNode):
            return
        if id(node) in on_path:
            raise SkillVerificationError(uri, "a YAML alias in the frontmatter refers to itself")
        on_path.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = [part for pair in node.value for part in pair]
        for child in children:
            visit(child, depth + 1)
        on_path.discard(id(node))

    visit(root, 0)


def _as_json(value: Any) -> Any:
    """YAML values as JSON would carry them (dates become ISO 8601 strings)."""
    if isinstance(value, dict):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value
