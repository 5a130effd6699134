"""JUnit XML: one testcase per (rule, call site); findings at error level are failures."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

# what XML 1.0 forbids in a document, which ElementTree passes through: a control character in a file name made the
# whole report unreadable to a CI's JUnit reader (batch 22c's P11); a lone surrogate (an undecodable name) cannot be
# written as UTF-8 at all
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def render(result, **_options) -> str:
    findings = result.visible()
    suite = ET.Element("testsuite", name=f"driftcheck vLLM {result.vllm.version or '?'}",
                       tests=str(max(len(findings) + len(result.unknown), 1)),
                       # every <failure> element counts: error findings and unknowns (both fail the scan)
                       failures=str(sum(1 for f in findings if f.severity == "error") + len(result.unknown)),
                       errors=str(len(result.internal_errors)), skipped="0")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="vllm.version", value=result.vllm.version or "")
    ET.SubElement(props, "property", name="vllm.source", value=result.vllm.source)
    for c in result.clients:
        ET.SubElement(props, "property", name=f"client.{c.name}", value=f"{c.version or ''} {c.source}")
    if not findings and not result.unknown:
        ET.SubElement(suite, "testcase", classname="driftcheck", name="no drift found")
    for f in findings:
        where = f"{f.client.path}:{f.client.line}" if f.client else "?"
        case = ET.SubElement(suite, "testcase", classname=f"driftcheck.{f.rule}.{f.name}", name=f"{where} {f.symbol or ''}".strip(),
                             file=f.client.path if f.client else "", line=str(f.client.line if f.client else 0))
        text = f.message + (f"\nvLLM: {f.vllm.path}:{f.vllm.line}  {f.vllm.code}" if f.vllm else "")
        if f.severity == "error":
            ET.SubElement(case, "failure", message=f.message, type=f.rule).text = text
        else:
            ET.SubElement(case, "system-out").text = f"[{f.severity}] {text}"
    for u in result.unknown:
        case = ET.SubElement(suite, "testcase", classname=f"driftcheck.{u.rule}.unknown", name=u.message[:120])
        ET.SubElement(case, "failure", message=u.message, type="unknown").text = u.message
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + _NOT_XML.sub("\ufffd", ET.tostring(root, encoding="unicode")) + "\n"
