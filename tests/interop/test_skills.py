"""Skills (SEP-2640) against fastmcp 4, which serves the skills of a directory
(tests/servers/fastmcp_skills_server.py): listing, loading with verification, files read on
demand and verified, a changed skill refused until its entry is fetched again. The checks a
real server cannot be made to fail are in tests/test_skills_verification.py."""

from __future__ import annotations

import pytest

from mcp_sync import (
    CapabilityError,
    Client,
    RpcError,
    SkillVerificationError,
    StdioTransport,
)
from mcp_sync.skills import LoadedSkill
from tests.helpers.support import PYTHON, SERVERS, needs_fastmcp

pytestmark = needs_fastmcp  # its server is fastmcp's skills provider

PDF = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: MIT
metadata:
  version: "2.1"
  tags: [pdf, forms]
---

# PDF processing

Fill the forms described in references/FORMS.md.
"""


@pytest.fixture
def skills_dir(tmp_path):
    pdf = tmp_path / "pdf-processing"
    (pdf / "references").mkdir(parents=True)
    (pdf / "SKILL.md").write_text(PDF)
    (pdf / "references" / "FORMS.md").write_text("Form A, form B.\n")
    git = tmp_path / "git-workflow"
    git.mkdir()
    (git / "SKILL.md").write_text(
        "---\nname: git-workflow\ndescription: Branch and commit the team's way\n---\n\nRebase.\n"
    )
    return tmp_path


@pytest.fixture
def client(skills_dir):
    c = Client("skills", "1.0", request_timeout=20)
    c.connect(StdioTransport(PYTHON, [str(SERVERS / "fastmcp_skills_server.py"), str(skills_dir)]))
    yield c
    c.close()


def test_list_skills_gives_entries_from_every_page(client):
    skills = {s.name: s for s in client.skills.list()}  # one skill per page on this server
    assert set(skills) == {"pdf-processing", "git-workflow"}
    pdf = skills["pdf-processing"]
    assert pdf.uri == "skill://pdf-processing/SKILL.md"
    assert pdf.description == "Extract, fill, and assemble PDF documents"
    assert pdf.frontmatter["metadata"] == {"version": "2.1", "tags": ["pdf", "forms"]}
    assert not pdf.is_dynamic
    assert {f.uri for f in pdf.resources} == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    }
    assert all(f.digest.startswith("sha256:") and f.size > 0 for f in pdf.resources)


def test_load_verifies_and_reads_files_on_demand(client):
    entry = next(s for s in client.skills.list() if s.name == "pdf-processing")
    loaded = client.skills.load(entry)
    assert isinstance(loaded, LoadedSkill) and loaded.verified
    assert loaded.text == PDF
    assert loaded.instructions.startswith("# PDF processing")
    assert loaded.files == ["references/FORMS.md"]
    assert loaded.read_text("references/FORMS.md") == "Form A, form B.\n"
    assert loaded.read("skill://pdf-processing/references/FORMS.md") == b"Form A, form B.\n"
    assert loaded.origin == "skills-fixture"
    tagged = loaded.for_model()
    assert 'origin="skills-fixture"' in tagged and PDF in tagged


def test_load_by_uri_fetches_the_entry(client):
    loaded = client.skills.load("skill://git-workflow/SKILL.md", origin="team")
    assert loaded.skill.name == "git-workflow" and loaded.instructions == "Rebase.\n"
    assert loaded.for_model().startswith('<skill name="git-workflow" origin="team"')
    with pytest.raises(RpcError) as unknown:
        client.skills.get("skill://nope/SKILL.md")
    assert unknown.value.code == -32602


def test_files_outside_the_entry_are_refused(client, skills_dir):
    loaded = client.skills.load("skill://pdf-processing/SKILL.md")
    (skills_dir / "pdf-processing" / "references" / "NEW.md").write_text("added later\n")
    with pytest.raises(SkillVerificationError, match="not listed in the skill's entry"):
        loaded.read("references/NEW.md")  # served now, but not in the entry we hold
    with pytest.raises(SkillVerificationError, match="leaves the skill"):
        loaded.read("../git-workflow/SKILL.md")
    with pytest.raises(SkillVerificationError, match="not a file of the skill"):
        loaded.read("skill://git-workflow/SKILL.md")


def test_a_changed_file_fails_verification_until_the_entry_is_refreshed(client, skills_dir):
    entry = client.skills.get("skill://pdf-processing/SKILL.md")
    loaded = client.skills.load(entry)
    forms = skills_dir / "pdf-processing" / "references" / "FORMS.md"
    forms.write_text("Form A, form C.\n")  # same size, other bytes
    with pytest.raises(SkillVerificationError, match="digest is sha256:"):
        loaded.read_text("references/FORMS.md")
    forms.write_text("Form A.\n")
    with pytest.raises(SkillVerificationError, match="size is 8 bytes, the entry says 16"):
        loaded.read_text("references/FORMS.md")
    (skills_dir / "pdf-processing" / "SKILL.md").write_text(PDF.replace("fill, ", ""))
    with pytest.raises(SkillVerificationError):
        client.skills.load(entry)  # the held entry is stale
    fresh = client.skills.load(entry.uri)  # a fresh entry: what the server serves now
    assert fresh.skill.description == "Extract, and assemble PDF documents"
    assert fresh.read_text("references/FORMS.md") == "Form A.\n"


def test_servers_without_the_extension_are_not_asked():
    c = Client("skills", "1.0", request_timeout=20)
    with (
        c.connect(StdioTransport(PYTHON, [str(SERVERS / "sdk_server.py")])),
        pytest.raises(CapabilityError, match="io.modelcontextprotocol/skills"),
    ):
        c.skills.list()


def test_a_group_lists_skills_per_server_and_loads_from_the_right_one(skills_dir, tmp_path):
    from mcp_sync import ClientGroup, UnknownName

    other = tmp_path / "other"
    (other / "pdf-processing").mkdir(parents=True)
    (other / "pdf-processing" / "SKILL.md").write_text(
        "---\nname: pdf-processing\ndescription: Another server's skill of the same name\n---\n"
        "\nOther.\n"
    )
    server = [str(SERVERS / "fastmcp_skills_server.py")]
    with ClientGroup() as group:
        group.add("docs", [PYTHON, *server, str(skills_dir)], request_timeout=20)
        group.add("mirror", [PYTHON, *server, str(other)], request_timeout=20)
        group.add("plain", [PYTHON, str(SERVERS / "sdk_server.py")], request_timeout=20)
        skills = group.list_skills()  # "plain" has no skills: not asked
        by_origin = {(s.meta["io.mcp-sync/server"], s.name) for s in skills}
        assert by_origin == {
            ("docs", "pdf-processing"),
            ("docs", "git-workflow"),
            ("mirror", "pdf-processing"),
        }
        mirrored = next(s for s in skills if s.meta["io.mcp-sync/server"] == "mirror")
        loaded = group.load_skill(mirrored)  # same URI as docs' skill: the entry's server
        assert loaded.instructions == "Other.\n" and loaded.origin == "mirror"
        assert group.load_skill(mirrored.uri, server="docs").text == PDF
        with pytest.raises(UnknownName, match="pass server="):
            group.load_skill(mirrored.uri)
