"""Skills (extension ``io.modelcontextprotocol/skills``, SEP-2640): the wire types.

A skill is a directory of files served as resources, minimally a ``SKILL.md`` whose YAML
frontmatter has ``name`` and ``description``. ``skills/list`` and ``skills/get`` return
:class:`Skill` entries: the frontmatter verbatim and a manifest of every file with its SHA-256
digest and size, or ``"dynamic"`` when the server cannot publish stable digests.
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import McpModel, MetaModel
from .common import CacheableResult, PaginatedResult

__all__ = ["SKILLS_EXTENSION", "GetSkillResult", "ListSkillsResult", "Skill", "SkillFile"]

#: The extension's identifier in ``capabilities.extensions``.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


class SkillFile(McpModel):
    """One file of a skill: its resource URI, ``sha256:<hex>`` digest and size in bytes."""

    uri: str
    digest: str
    size: int


class Skill(MetaModel):
    """A skill entry: the URI of its ``SKILL.md``, its frontmatter, and its files."""

    uri: str
    #: The ``SKILL.md`` YAML frontmatter as a JSON object; ``name`` and ``description`` at least.
    frontmatter: dict[str, Any]
    #: Every file of the skill (``SKILL.md`` included), or ``"dynamic"``: no digests to check.
    resources: list[SkillFile] | Literal["dynamic"]

    @property
    def name(self) -> str:
        """The skill's name (a label: two servers, or two paths, may share it)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The skill's directory URI: ``uri`` without ``/SKILL.md``."""
        return self.uri.removesuffix("/SKILL.md")

    @property
    def is_dynamic(self) -> bool:
        """True when the server publishes no digests: the content cannot be verified."""
        return self.resources == "dynamic"


class ListSkillsResult(PaginatedResult):
    """The result of ``skills/list``."""

    skills: list[Skill]


class GetSkillResult(CacheableResult):
    """The result of ``skills/get``."""

    skill: Skill
