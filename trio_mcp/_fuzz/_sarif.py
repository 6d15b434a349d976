"""A fuzzing report as SARIF 2.1.0, the format code-scanning UIs (GitHub, GitLab, Azure
DevOps) read: ``trio-mcp fuzz --format sarif``.

One run of one tool (``trio-mcp fuzz``) whose rules are the invariants (every one that
the run's check classes cover, so that a finding that disappears is seen as fixed), each
with its requirement as help text, its check class and CWE as tags, and the CWE as a
reference into the CWE taxonomy. One result per failure and per warning: level
``error`` for a ``MUST``, ``warning`` for a ``SHOULD`` (``error`` for both with
``--strict``, as the run counts them), located at its reproduction file when one was
written, else at the target.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

from .._version import __version__
from ._invariants import INVARIANTS, Invariant
from ._report import FuzzFailure, FuzzReport

__all__ = ["SARIF_SCHEMA", "sarif_log"]

#: The schema a SARIF 2.1.0 log names.
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_CWE_VERSION: Final = "4.16"
#: GitHub's ``security-severity`` (0 to 10) for the security classes' rules, by level.
_SECURITY_SEVERITY: Final = {"MUST": "7.5", "SHOULD": "5.0"}


def _rule(invariant: Invariant) -> dict[str, Any]:
    tags: list[str] = [invariant.check_class, invariant.level]
    properties: dict[str, Any] = {"tags": tags}
    if invariant.check_class != "protocol":
        tags.append("security")
        properties["security-severity"] = _SECURITY_SEVERITY[invariant.level]
    rule: dict[str, Any] = {
        "id": invariant.name,
        "name": "".join(part.capitalize() for part in invariant.name.split("-")),
        "shortDescription": {"text": invariant.requirement.split(". ")[0].rstrip(".") + "."},
        "fullDescription": {"text": invariant.requirement},
        "help": {
            "text": f"{invariant.requirement} ({invariant.source})",
            "markdown": f"{invariant.requirement}\n\nSource: {invariant.source}",
        },
        "defaultConfiguration": {"level": "error" if invariant.level == "MUST" else "warning"},
        "properties": properties,
    }
    if invariant.cwe is not None:
        tags.append(f"external/cwe/cwe-{invariant.cwe}")
        rule["relationships"] = [
            {
                "target": {
                    "id": str(invariant.cwe),
                    "toolComponent": {"name": "CWE"},
                },
                "kinds": ["relevant"],
            }
        ]
    return rule


def _result(
    failure: FuzzFailure, rule_index: int, level: str, target: str, transport: str
) -> dict[str, Any]:
    if failure.rerun is not None:  # a probe's or a scan's: its file runs it again
        what = failure.rerun.get("probe") or failure.rerun.get("scan")
        text = f"{failure.detail} (era {failure.era}, the {what} {_kind(failure)}"
    else:
        text = f"{failure.detail} (era {failure.era}, {failure.messages_sent} messages"
    if failure.reproduced is not None:
        text += ", reproduced" if failure.reproduced else ", did not reproduce on replay"
    text += ")"
    if failure.path:
        text += f". Replay it with: trio-mcp replay {failure.path}"
    location: dict[str, Any] = {
        # A URI reference: the reproduction's path, else the target (a command line
        # percent-encoded, a URL as it is).
        "physicalLocation": {
            "artifactLocation": {"uri": failure.path or quote(target, safe=":/?&=@")}
        },
        "message": {"text": "the reproduction" if failure.path else f"the {transport} target"},
    }
    return {
        "ruleId": failure.invariant,
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"invariant/era": f"{failure.invariant}/{failure.era}"},
        "properties": {
            "class": failure.check_class,
            "requirementLevel": failure.level,
            "era": failure.era,
            "messagesSent": failure.messages_sent,
        },
    }


def sarif_log(report: FuzzReport) -> dict[str, Any]:
    """``report`` as a SARIF 2.1.0 log (plain JSON, to be dumped as it is)."""
    invariants = [i for i in INVARIANTS.values() if i.check_class in report.checks]
    index = {invariant.name: n for n, invariant in enumerate(invariants)}
    results = []
    for items, level in ((report.failures, "error"), (report.warnings, "warning")):
        for item in items:
            if item.invariant not in index:
                index[item.invariant] = len(invariants)
                invariants.append(INVARIANTS[item.invariant])
            results.append(
                _result(item, index[item.invariant], level, report.target, report.transport)
            )
    cwes = sorted({i.cwe for i in invariants if i.cwe is not None})
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "trio-mcp fuzz",
                "version": __version__,
                "rules": [_rule(invariant) for invariant in invariants],
                "supportedTaxonomies": [{"name": "CWE"}],
            }
        },
        "taxonomies": [
            {
                "name": "CWE",
                "version": _CWE_VERSION,
                "organization": "MITRE",
                "informationUri": "https://cwe.mitre.org/",
                "shortDescription": {"text": "The MITRE Common Weakness Enumeration"},
                "taxa": [
                    {
                        "id": str(cwe),
                        "helpUri": f"https://cwe.mitre.org/data/definitions/{cwe}.html",
                    }
                    for cwe in cwes
                ],
            }
        ],
        "invocations": [
            {
                "executionSuccessful": report.stopped != "stopped",
                "properties": {
                    "target": report.target,
                    "transport": report.transport,
                    "seed": report.seed,
                    "checks": list(report.checks),
                    "notes": list(report.notes),
                },
            }
        ],
        "results": results,
        "properties": {"target": report.target, "eras": list(report.eras)},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _kind(failure: FuzzFailure) -> str:
    return "probe" if failure.rerun is not None and "probe" in failure.rerun else "scan"
