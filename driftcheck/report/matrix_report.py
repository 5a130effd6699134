"""Matrix outputs: JSON, Markdown, HTML and a PNG picture (green/red/grey cells with rule ids)."""

from __future__ import annotations

import html
import io
import json

COLORS = {"ok": "#2e9e4f", "fail": "#d64541", "unknown": "#9e9e9e", "error": "#6d6d6d"}
SYMBOL = {"ok": "ok", "fail": "FAIL", "unknown": "?", "error": "n/a"}


def _label(client: dict) -> str:
    return f"{client['name'] or client['spec']} {client['version'] or ''}".strip()


def _cell_text(cell) -> str:
    if cell is None:
        return ""
    if cell.status == "fail":
        return " ".join(cell.rules)
    return SYMBOL[cell.status]


def to_json(matrix, ranges, provenance: dict) -> str:
    data = matrix.to_json()
    data["ranges"] = [r.to_json() for r in ranges]
    data["provenance"] = provenance
    return json.dumps(data, indent=2) + "\n"


def to_markdown(matrix, ranges) -> str:
    out = [f"# driftcheck matrix: {len(matrix.versions)} vLLM release(s) x {len(matrix.clients)} client(s)", "",
           f"Computed in {matrix.seconds:.1f} s with {matrix.jobs} process(es). A cell lists the rules with error findings; "
           "`ok` means no error (warnings may remain), `?` means a probe could not decide, `n/a` that the release "
           "could not be read.", "",
           "| vLLM | " + " | ".join(_label(c) for c in matrix.clients) + " |",
           "|---|" + "---|" * len(matrix.clients)]
    for v in matrix.versions:
        out.append(f"| {v} | " + " | ".join(_cell_text(matrix.cell(v, c["spec"])) for c in matrix.clients) + " |")
    out += ["", "## Compatible ranges", ""]
    for r in ranges:
        label = next(_label(c) for c in matrix.clients if c["spec"] == r.client)
        out.append(f"- **{label}**: computed `vllm{r.computed}`" if r.computed else f"- **{label}**: no compatible release")
        out.append(f"  - declared: `{r.declared}`" + ("" if r.agrees is None else (" (agrees)" if r.agrees else " (differs)"))
                   if r.declared else "  - declares no vLLM requirement")
        if r.first_break_above:
            out.append(f"  - first breaking release above: {r.first_break_above} ({', '.join(r.rules_above) or 'unknown'})"
                       + (f": {r.reason_above}" if r.reason_above else ""))
        if r.first_break_below:
            out.append(f"  - first breaking release below: {r.first_break_below} ({', '.join(r.rules_below) or 'unknown'})")
        out += [f"  - {n}" for n in r.notes]
    return "\n".join(out) + "\n"


def to_html(matrix, ranges) -> str:
    rows = []
    for v in matrix.versions:
        tds = []
        for c in matrix.clients:
            cell = matrix.cell(v, c["spec"])
            color = COLORS.get(cell.status, "#ffffff") if cell else "#ffffff"
            tip = html.escape(cell.first_error or cell.message or cell.status) if cell else ""
            tds.append(f'<td style="background:{color};color:white" title="{tip}">{html.escape(_cell_text(cell))}</td>')
        rows.append(f"<tr><th>{html.escape(v)}</th>{''.join(tds)}</tr>")
    head = "".join(f"<th>{html.escape(_label(c))}</th>" for c in matrix.clients)
    ranges_html = "".join(
        f"<li><b>{html.escape(r.client)}</b>: computed <code>vllm{html.escape(r.computed or ' (none)')}</code>, declared "
        f"<code>{html.escape(r.declared or '-')}</code>; first break above: {html.escape(r.first_break_above or '-')} "
        f"{html.escape(' '.join(r.rules_above))}</li>" for r in ranges)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>driftcheck matrix</title>"
            "<style>body{font-family:sans-serif}td,th{padding:4px 8px;border:1px solid #ddd;font-size:13px}"
            "table{border-collapse:collapse}</style></head><body>"
            f"<h1>driftcheck matrix</h1><p>{len(matrix.versions)} releases, {matrix.seconds:.1f} s, {matrix.jobs} processes</p>"
            f"<table><tr><th>vLLM</th>{head}</tr>{''.join(rows)}</table><h2>Compatible ranges</h2><ul>{ranges_html}</ul>"
            "</body></html>\n")


def to_png(matrix, ranges, path) -> bool:
    """Draw the matrix; False when matplotlib is not installed (the other formats still exist)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        return False
    n_rows, n_cols = len(matrix.versions), len(matrix.clients)
    cell_w, cell_h = 3.2, 0.32
    fig_w, fig_h = 1.4 + cell_w * n_cols, 1.3 + cell_h * n_rows
    fig, ax = plt.subplots(figsize=(fig_w, fig_h), dpi=110)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    ax.axis("off")
    for i, v in enumerate(matrix.versions):
        ax.text(-0.05, i + 0.5, v, ha="right", va="center", fontsize=8)
        for j, c in enumerate(matrix.clients):
            cell = matrix.cell(v, c["spec"])
            status = cell.status if cell else "error"
            ax.add_patch(Rectangle((j + 0.02, i + 0.06), 0.96, 0.88, color=COLORS[status]))
            ax.text(j + 0.5, i + 0.5, _cell_text(cell), ha="center", va="center", fontsize=6.5, color="white")
    for j, c in enumerate(matrix.clients):
        r = next((r for r in ranges if r.client == c["spec"]), None)
        ax.text(j + 0.5, -0.9, _label(c), ha="center", va="bottom", fontsize=9, weight="bold")
        if r is not None:
            ax.text(j + 0.5, -0.25, f"computed vllm{r.computed or ' none'}\ndeclared {r.declared or '-'}",
                    ha="center", va="bottom", fontsize=6.5)
    fig.text(0.01, 0.005, "green: no error   red: rule ids with errors   grey: unknown / not readable", fontsize=6.5)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    from driftcheck.storage.safe_write import write_bytes

    write_bytes(path, png.getvalue())  # as every other report: never renamed over a link or a device
    return True
