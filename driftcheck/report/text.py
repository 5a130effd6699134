"""Text: a rich table per client file, with the client line and the vLLM line side by side."""

from __future__ import annotations

import io
import shutil
from itertools import groupby

from rich.console import Console
from rich.table import Table
from rich.text import Text

from driftcheck.report import counts_by_rule

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


MIN_WIDTH = 60  # below this a five-column table is unreadable anyway


def terminal_width(fallback: int = 120) -> int:
    """The terminal's width ($COLUMNS, else the terminal on stdout), or `fallback` for a pipe or file."""
    return max(shutil.get_terminal_size((fallback, 24)).columns, MIN_WIDTH)


def render(result, color: bool | None = None, width: int | None = None, **_options) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=bool(color), no_color=not color, width=width or terminal_width(), highlight=False)
    v = result.vllm
    clients = ", ".join(f"{c.name or c.location} {c.version or ''}".strip() for c in result.clients)
    console.print(Text.assemble(("driftcheck ", "bold"), f"{clients} against vLLM {v.version or '?'} ", (f"({v.source})", "dim")))
    for (client_name, path), group in groupby(result.visible(), key=lambda f: (f.client_name, f.client.path if f.client else "")):
        table = Table(title=f"{path}" + (f"  [{client_name}]" if client_name and len(result.clients) > 1 else ""),
                      title_justify="left", show_lines=True, expand=True)
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("finding", ratio=3)
        table.add_column(f"vLLM {v.version or ''}".strip(), ratio=2, overflow="fold")
        table.add_column("fix", no_wrap=True)
        for f in group:
            # the severity in words too: a CI log or a pipe has no colour to tell an error from a warning
            rule = Text(f"{f.rule} {f.severity}\n{f.name}", style=STYLE[f.severity])
            finding = Text(f.message)
            if f.client and f.client.code:
                finding.append(f"\n{f.client.code}", style="dim")
            vloc = Text("")
            if f.vllm:
                vloc = Text(f"{f.vllm.path}:{f.vllm.line}")
                if f.vllm.code and not f.vllm.code.lstrip().startswith("#"):  # a module's first line (a licence
                    # comment) stands for the whole module when a name is missing from it: no evidence to show
                    vloc.append(f"\n{f.vllm.code}", style="dim")
            table.add_row(str(f.client.line if f.client else ""), rule, finding, vloc, f.fix or "")
        console.print(table)
    if result.unknown:
        console.print(Text("Could not decide (unknown, not a pass):", style="bold yellow"))
        for u in result.unknown:
            where = f"{u.client.path}:{u.client.line} " if u.client else ""
            console.print(f"  {u.rule} {where}{u.message}")
    for err in result.internal_errors:
        console.print(Text(f"internal error: {err}", style="bold red"))
    by_rule = _by_rule(result.visible())
    if by_rule:
        console.print(Text("by rule: ", style="bold") + Text("; ".join(by_rule)))
    s = result.to_json()["summary"]
    line = Text.assemble(
        (f"{s['error']} error(s)", STYLE["error"] if s["error"] else ""), ", ",
        (f"{s['warning']} warning(s)", STYLE["warning"] if s["warning"] else ""), ", ",
        f"{s['info']} info, {s['unknown']} unknown",
        (f", {s['suppressed']} suppressed" if s.get("suppressed") else ""),
        (f"  ({result.stats.get('seconds', 0):.2f}s, {result.stats.get('client_files', 0)} client file(s) importing vLLM)", "dim"),
    )
    console.print(line)
    return buf.getvalue()


def _by_rule(findings) -> list[str]:
    """`DC002 missing-name: 40 errors, 3 warnings` per rule: a platform plugin's report runs to thousands of lines."""
    return [f"{rule} {name}: " + ", ".join(f"{n} {sev}{'s' if n > 1 else ''}" for sev in ("error", "warning", "info")
                                         for n in [per.get(sev, 0)] if n)
            for (rule, name), per in counts_by_rule(findings).items()]
