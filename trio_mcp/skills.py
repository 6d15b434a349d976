"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``).

Server side: :meth:`Server.add_skills <trio_mcp.Server.add_skills>` serves a directory
of ``SKILL.md`` folders or :class:`Skill` objects. Client side: :func:`list_skills` and
:func:`get_skill` fetch entries (no file is read), :func:`load_skill` and
:func:`read_skill_file` read files and verify them against the entry before use. In a
host: :func:`host_skills` gives the skills each server's policy allows, :func:`skill_catalog`
what the model sees of them, :func:`load_hosted_skill` loads one from its own server.
"""

from ._skills._catalog import (
    DynamicSkill as DynamicSkill,
    FileReader as FileReader,
    Skill as Skill,
    SkillFile as SkillFile,
    skills_from_directory as skills_from_directory,
)
from ._skills._fetching import (
    MAX_LISTED_SKILLS as MAX_LISTED_SKILLS,
    SkillEntry as SkillEntry,
    SkillResource as SkillResource,
    SkillVerificationError as SkillVerificationError,
    get_skill as get_skill,
    list_skills as list_skills,
    list_skills_page as list_skills_page,
    load_skill as load_skill,
    read_skill_file as read_skill_file,
)
from ._skills._format import (
    MAX_SKILL_BYTES as MAX_SKILL_BYTES,
    MAX_SKILL_FILES as MAX_SKILL_FILES,
    SKILLS_EXTENSION as SKILLS_EXTENSION,
    SkillFormatError as SkillFormatError,
    check_skill_name as check_skill_name,
    read_frontmatter as read_frontmatter,
    skill_digest as skill_digest,
)
from ._skills._hosting import (
    HostedSkill as HostedSkill,
    HostedSkills as HostedSkills,
    host_skills as host_skills,
    load_hosted_skill as load_hosted_skill,
    read_hosted_skill_file as read_hosted_skill_file,
    skill_catalog as skill_catalog,
)
