"""A fastmcp 4.x server publishing the skills found in a directory (SEP-2640 skills
extension), re-read on every request so that tests can change files under it.

    python fastmcp_skills_server.py SKILLS_DIR
"""

from __future__ import annotations

import sys
import warnings

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

warnings.simplefilter("ignore")

mcp = FastMCP("skills-fixture", list_page_size=1)  # one skill per skills/list page
mcp.add_provider(SkillsDirectoryProvider(sys.argv[1], reload=True))

if __name__ == "__main__":
    mcp.run(show_banner=False)
