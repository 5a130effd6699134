"""Container specs that start vLLM's server image, whose entrypoint is `vllm serve`: the words a spec hands that
entrypoint are the server's flags.

vLLM's `vllm/vllm-openai` image runs `vllm serve` (its first releases `python3 -m vllm.entrypoints.openai.api_server`,
which takes the same flags) and appends the container's arguments. Deployments write those arguments apart from any
`vllm serve` word, so a reader of command lines never saw them (batch 15b's R5 / R6):

- `docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.9.0 --model M --swap-space 4` (shell, Python lists);
- a compose service's `command:` (the image's CMD; its `entrypoint:` replaces the ENTRYPOINT);
- a Kubernetes container's `args:` (the CMD; its `command:` replaces the ENTRYPOINT: `["python3", "-m",
  "vllm.entrypoints.openai.api_server"]` with the flags in `args:`);
- a Dockerfile stage `FROM vllm/vllm-openai` whose exec-form `CMD` lists the flags.

YAML is read by its indentation, not parsed: Helm templates are not YAML until rendered, and a word holding a template
(`{{ .Values.model }}`) or a variable (`$(MODEL)`, `${MODEL}`) is computed, as in shell scripts. Only a mapping holding
an `image:` is read, and only the keys of that one mapping.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from driftcheck.client_model.shell_arrays import computed

# a reference to vLLM's server image, by any registry or mirror path, any tag or digest (`vllm/vllm-openai:v0.9.0`,
# `docker.io/vllm/vllm-openai@sha256:...`, `registry.local/mirror/vllm-openai:latest`, a Helm `:{{ .Values.tag }}`,
# a registry prefix a template fills: `{{DOCKER_IMAGE_PREFIX}}vllm/vllm-openai:v0.10.2`)
_SERVER_IMAGE = re.compile(r"(?:\{\{[^}]*\}\}|\$\{[^}]*\})?(?:[\w.:-]+/)*vllm-openai(?::(?:[^\s\"'@/{]|\{\{[^}]*\}\}|\{[^}\s]*\})+)?(?:@sha256:[0-9a-f]+)?")


_OFFICIAL_IMAGE = re.compile(r"(?:docker\.io/)?vllm/vllm-openai(?:[:@]\S*)?")


def official_server_image(ref: str) -> bool:
    """Whether an image reference is vLLM's own published server image (a mirror or a build of the user's that keeps
    the name may have set another entrypoint)."""
    return _OFFICIAL_IMAGE.fullmatch(image_reference(ref)) is not None


def image_reference(word: str) -> str:
    """The image a word names: its quotes read off, and a variable with a default (`${VLLM_IMAGE:-vllm/vllm-openai:v0.6.6}`,
    compose and shell alike) read as that default, which runs unless the user sets the variable (batch 18a's M1)."""
    word = word.strip("\"'")
    m = re.fullmatch(r"\$\{\w+:?-([^}]*\S)\}", word)
    return m.group(1).strip("\"'") if m else word


def server_image(word: str | None) -> bool:
    """Whether a word names vLLM's server image (`vllm/vllm-openai`), whose entrypoint is `vllm serve`."""
    return word is not None and _SERVER_IMAGE.fullmatch(image_reference(word)) is not None


def image_run_at(texts: list[str | None], images: dict[str, str] | None = None) -> int | None:
    """The index of the image word in `docker run ... vllm/vllm-openai:TAG ARGS` (also podman, nerdctl, `docker container
    run`) that keeps the image's entrypoint: the words after it are `vllm serve`'s. None otherwise. `images`: the
    script's variables that name the server image (`image_variables`), for `docker run ... "$IMAGE" ARGS`."""
    run = None
    for i, t in enumerate(texts):
        if t == "run" and i >= 1 and texts[i - 1] in ("docker", "podman", "nerdctl", "container"):
            run = i
        elif run is not None and t is not None and (t == "--entrypoint" or t.startswith("--entrypoint=")):
            return None  # another entrypoint: `_entry_at` reads `--entrypoint vllm IMAGE serve`
        elif run is not None and (server_image(t) or variable_image(t, images) is not None):
            return i
    return None


# every write of a scalar: `NAME=value` after a line start or a separator (`then IMAGE=x;`), and `${NAME:=value}`
_SCALAR = re.compile(r"""(?:^|[\s;&|(])([A-Za-z_]\w*)=("[^"]*"|'[^']*'|[^\s;&|)]*)|\$\{([A-Za-z_]\w*):?=([^}]*)\}""")


def image_variables(lines: list[str]) -> dict[str, str]:
    """The shell variables a script sets to vLLM's server image, and nothing else, on every line it sets them
    (`IMAGE="${IMAGE:-vllm/vllm-openai:v0.8.5}"`, `: "${IMAGE:=vllm/vllm-openai:latest}"`): name -> image reference
    (batch 18a's M2). The user may export another image; the words after it are still the server's flags."""
    seen: dict[str, set[str]] = {}
    for line in lines:
        if line.lstrip().startswith("#"):
            continue
        for m in _SCALAR.finditer(line):
            name, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            value = value.strip("\"'")
            seen.setdefault(name, set()).add(image_reference(value) if value.startswith("${") else value)
    return {name: next(iter(values)) for name, values in seen.items()
            if len(values) == 1 and server_image(next(iter(values)))}


def variable_image(word: str | None, images: dict[str, str] | None) -> str | None:
    """The image a `$IMAGE` / `${IMAGE}` word expands to, where the script sets that variable to the server image."""
    m = re.fullmatch(r"\$(?:\{(\w+)\}|(\w+))", word or "")
    return images.get(m.group(1) or m.group(2)) if m and images else None


# ------------------------------------------------------------------------------------------------------------- YAML
@dataclass
class Value:
    """The words of one key of a container's mapping, each with its 1-based line (None: computed, or not one word)."""
    line: int  # the key's line
    words: list[tuple[str | None, int]]
    last: int  # the value's last line


@dataclass
class ContainerCommand:
    """What a container of a YAML manifest runs: its entrypoint's words, then its arguments'."""
    line: int  # the line of the key its arguments are under (the image's where it has none)
    words: list[tuple[str | None, int]]
    image: tuple[str, int]  # (the image reference, its line)
    rows: set[int] = field(default_factory=set)  # the 1-based lines its keys and their values take
    from_image: bool = False  # the first two words are the image's own entrypoint (`vllm serve`), not the spec's


_KEY = re.compile(r"^(\s*)(-\s+)?([\w.-]+)\s*:(?:\s+|$)(.*)$")
_WANTED = ("image", "command", "args", "entrypoint", "build")


def container_commands(lines: list[str]) -> list[ContainerCommand]:
    """The commands of the YAML mappings that hold an `image:` key and either name vLLM's server image or set its
    entrypoint. Compose (a top-level `services:`): `entrypoint:` replaces the image's ENTRYPOINT and `command:` its CMD;
    elsewhere (Kubernetes, and the resources that embed its pod templates) `command:` and `args:` do."""
    compose = any(re.match(r"services\s*:\s*(?:#.*)?$", line) for line in lines)
    out: list[ContainerCommand] = []
    for row, text in enumerate(lines):
        m = _KEY.match(text)
        if not m or m.group(3) != "image":
            continue
        indent = len(m.group(1)) + len(m.group(2) or "")  # the mapping's key column
        keys: dict[str, Value] = {}
        for key_row in _sibling_rows(lines, row, indent, starts_item=bool(m.group(2))):
            km = _KEY.match(lines[key_row])
            if km and km.group(3) in _WANTED and km.group(3) not in keys:
                keys[km.group(3)] = _value(lines, key_row, indent, km.group(4))
        image = image_reference(_unquote(_strip_comment(m.group(4)).strip()))  # (a variable in its tag still names it)
        entry = keys.get("entrypoint" if compose else "command")
        arguments = keys.get("command" if compose else "args")
        if entry is not None:
            head = entry.words
        elif server_image(image) and not (compose and "build" in keys):
            # (a compose service that also says `build:` tags the image it builds with that name: its Dockerfile's
            # ENTRYPOINT, whatever it is, runs)
            head = [("vllm", row + 1), ("serve", row + 1)]  # the image's ENTRYPOINT
        else:
            continue  # an image whose entrypoint driftcheck does not know
        rows = {r for v in (entry, arguments) if v is not None for r in range(v.line, v.last + 1)}
        out.append(ContainerCommand(arguments.line if arguments else entry.line if entry else row + 1,
                                    head + (arguments.words if arguments else []), (image, row + 1), rows,
                                    from_image=entry is None))
    return out


def _sibling_rows(lines: list[str], row: int, indent: int, starts_item: bool) -> list[int]:
    """The rows of the keys of the mapping whose key at `row` sits at column `indent`: from where the mapping begins
    (`row` itself for `- image:`; else up to a `- ` item at `indent - 2`, or a line indented less) to where it ends."""
    rows = [row]
    for up in range(row - 1, -1, -1) if not starts_item else ():
        text = lines[up]
        if _blank(text):
            continue
        col = column(text)
        if col == indent and not text.lstrip().startswith("-"):
            rows.append(up)
        elif col < indent:
            if text.lstrip().startswith("- ") and col + 2 == indent:
                rows.append(up)  # the item's first key (`- name: vllm`)
            break
    for down in range(row + 1, len(lines)):
        text = lines[down]
        if _blank(text):
            continue
        col = column(text)
        if col < indent or text.startswith("---"):
            break
        if col == indent and not text.lstrip().startswith("-"):
            rows.append(down)
    return sorted(rows)


def _blank(text: str) -> bool:
    """A line that holds no key: empty, a comment, or a template's own line (`{{- if .Values.lora }}`, which charts
    write at any column, the first included)."""
    stripped = text.strip()
    return not stripped or stripped.startswith(("#", "{{", "{%"))


def column(text: str) -> int:
    """The column a line's text starts at."""
    return len(text) - len(text.lstrip())


def _value(lines: list[str], row: int, indent: int, inline: str) -> Value:
    """A key's value as words: a block list (one word an item), a flow list, a block scalar or a plain string (split as
    a compose file splits its `command:` string)."""
    inline = _strip_comment(inline).strip()
    if not inline or re.fullmatch(r"[>|][-+]?\d?", inline):
        body: list[int] = []
        for down in range(row + 1, len(lines)):
            text = lines[down]
            if not text.strip():
                continue
            col = column(text)
            if col > indent or (col == indent and text.lstrip().startswith("- ") and not inline) or \
                    text.lstrip().startswith(("{{", "{%")):  # a chart's `{{- if }}` at any column, inside the list
                body.append(down)
            else:
                break
        last = body[-1] + 1 if body else row + 1
        content = [lines[r].strip() for r in body if not _blank(lines[r])]
        # a block scalar, or a plain scalar over several lines (`command:` then `--model m` / `--port 8000` below it,
        # batch 18c): each line's words
        if inline or content and not any(c.startswith("- ") or _KEY.match(c) for c in content):
            words: list[tuple[str | None, int]] = []
            for r in body:
                if not lines[r].strip().startswith("#"):
                    words += _split(lines[r].strip().removesuffix("\\"), r + 1)
            return Value(row + 1, words, last)
        return _block_list(lines, body, row, last)
    if inline.startswith("["):
        text, end = inline, row
        while not _closed(text) and end + 1 < len(lines):
            end += 1
            text += " " + _strip_comment(lines[end]).strip()
        words = _flow_list(text, row + 1)
        return Value(row + 1, words, end + 1)
    if inline[0] in "\"'":
        return Value(row + 1, [(w, row + 1) for w, _ in _split(_unquote(inline), row + 1)], row + 1)
    words, end = _split(inline, row + 1), row
    while end + 1 < len(lines) and column(lines[end + 1]) > indent and not _blank(lines[end + 1]) and \
            not lines[end + 1].lstrip().startswith("- ") and not _KEY.match(lines[end + 1]):
        end += 1  # a plain scalar's next line (`command: --model m` then `  --port 8000`)
        words += _split(_strip_comment(lines[end]).strip(), end + 1)
    return Value(row + 1, words, end + 1)


def _block_list(lines: list[str], body: list[int], row: int, last: int) -> Value:
    words: list[tuple[str | None, int]] = []
    item_col = None
    continued: list[str] | None = None
    depth = 0  # inside a template's `{{ if }}` / `{{ range }}` / `{{ with }}`: rendered or not as the values say
    for r in body:
        text = lines[r]
        stripped = text.strip()
        if stripped.startswith("#"):
            continue
        if _OPENS.match(stripped) or _CLOSES.match(stripped) or _ELSE.match(stripped):  # (no word of its own)
            depth = max(0, depth + (1 if _OPENS.match(stripped) else -1 if _CLOSES.match(stripped) else 0))
            continue
        if depth:  # a chart renders a flag under `{{- if semverCompare ">=0.8" .Values.tag }}` only for some releases
            if stripped.startswith("- ") and (item_col is None or column(text) == item_col):
                word = _word(_unquote(_strip_comment(stripped[1:]).strip()))
                words.append((None if word is None or word.startswith("-") else word, r + 1))  # (an executable stays)
            continue
        if item_col is None and stripped.startswith("- "):
            item_col = column(text)
        if continued is not None:  # the lines of a quoted item that goes on below its `-` line (lws' `- "bash ...;`)
            continued.append(stripped)
            if _closes(" ".join(continued)):
                words[-1] = (_word(_unquote(" ".join(continued))), words[-1][1])
                continued = None
            continue
        if column(text) == item_col and stripped.startswith("-"):
            item = _strip_comment(stripped[1:]).strip()
            if not item or item[0] in ">|[{" or re.match(r"[\w.-]+\s*:(\s|$)", item) and item[0] not in "\"'-":
                words.append((None, r + 1))  # a nested block, a mapping: not one word
                continue
            if item[0] in "\"'" and not _closes(item):
                words.append((None, r + 1))
                continued = [item]
                continue
            words.append((_word(_unquote(item)), r + 1))
        elif "{{" in stripped or "{%" in stripped or item_col is None or column(text) <= item_col:
            words.append((None, r + 1))  # `{{- toYaml .Values.args | nindent 12 }}`: any number of words
        elif words:
            words[-1] = (None, words[-1][1])  # an item that goes on below its `-` line: not the word read there
    return Value(row + 1, words, last)


_OPENS = re.compile(r"\{\{-?\s*(?:if|range|with)\b|\{%-?\s*(?:if|for|with)\b")
_CLOSES = re.compile(r"\{\{-?\s*end\b|\{%-?\s*end(?:if|for|with)\b")
_ELSE = re.compile(r"\{\{-?\s*else\b|\{%-?\s*(?:else|elif)\b")


def _closes(item: str) -> bool:
    """Whether a quoted scalar is closed: its last character is its quote (not `\\"`, and not half of `''`)."""
    body = item[1:]
    if item[0] == "'":
        return body.replace("''", "").endswith("'")
    return body.endswith('"') and not body.endswith('\\"')


def _word(text: str) -> str | None:
    """A word as read, or None where it is computed; a word with spaces is kept whole (one argument: a shell's script,
    whose own words `launches` reads, or a value, never a flag)."""
    return text if re.search(r"\s", text) else None if computed(text) else text


def _closed(text: str) -> bool:
    depth, quote = 0, None
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
    return depth <= 0


def _flow_list(text: str, line: int) -> list[tuple[str | None, int]]:
    value = exec_form(text)
    if value is not None:
        return [(_word(v) if isinstance(v, str) else None, line) for v in value]
    body = text.strip()[1:].rsplit("]", 1)[0]
    try:
        lexer = shlex.shlex(body, posix=True)
        lexer.whitespace = ","
        lexer.whitespace_split = True
        items = [item.strip() for item in lexer]
    except ValueError:
        return [(None, line)]
    return [(_word(item) if item else None, line) for item in items]


def _split(text: str, line: int) -> list[tuple[str | None, int]]:
    try:
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        return [(_word(w), line) for w in lexer]
    except ValueError:
        return [(None, line)]


def _unquote(item: str) -> str:
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
        body = item[1:-1]
        return body.replace("''", "'") if item[0] == "'" else body.replace('\\"', '"')
    return item


def _strip_comment(text: str) -> str:
    """`text` up to a YAML comment (a `#` after a space, outside quotes)."""
    quote = None
    for j, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'" and (j == 0 or text[j - 1] in " [,:"):
            quote = c
        elif c == "#" and (j == 0 or text[j - 1] in " \t"):
            return text[:j]
    return text



# ------------------------------------------------------------------------------------------------------- Dockerfile
_INSTRUCTION = re.compile(r"^\s*(FROM|ENTRYPOINT|CMD)\s+(.*)$", re.IGNORECASE)


def dockerfile_commands(lines: list[str]) -> list[ContainerCommand]:
    """The commands of the stages whose exec-form `CMD` is appended to vLLM's server entrypoint: one the stage sets
    (`ENTRYPOINT ["vllm", "serve"]`), or the one it inherits from vLLM's server image or a stage built on it. A
    shell-form `CMD` runs under `/bin/sh -c`, and a shell-form `ENTRYPOINT` ignores `CMD`: neither is read."""
    out: list[ContainerCommand] = []
    entries: dict[str, tuple] = {}  # stage alias -> (the entrypoint its containers run, the image it is built on)
    stage: dict | None = None

    def close() -> None:
        if stage and stage["entry"] and stage["cmd"] is not None:
            words, row = stage["cmd"]
            out.append(ContainerCommand(row, stage["entry"] + words, stage["image"], {row, *stage["entry_rows"]},
                                        from_image=not stage["entry_rows"]))

    for row, text in _instructions(lines):
        m = _INSTRUCTION.match(text)
        if not m:
            continue
        word, rest = m.group(1).upper(), m.group(2).strip()
        if word == "FROM":
            close()
            parts = [p for p in rest.split() if not p.startswith("--")]
            ref = parts[0] if parts else ""
            inherited, image = entries[ref.lower()] if ref.lower() in entries else \
                ([("vllm", row), ("serve", row)] if server_image(ref) else None, (ref, row))
            stage = {"image": image, "entry": inherited, "entry_rows": set(), "cmd": None}
            if len(parts) >= 3 and parts[1].lower() == "as":
                stage["alias"] = parts[2].lower()
        elif stage is None:
            continue
        elif word == "ENTRYPOINT":
            exec_form = _exec_words(rest, row)
            stage["entry"], stage["entry_rows"], stage["cmd"] = exec_form, {row}, None  # (a new ENTRYPOINT drops CMD)
        elif word == "CMD":
            exec_form = _exec_words(rest, row)
            stage["cmd"] = (exec_form, row) if exec_form is not None else None
        if stage is not None and "alias" in stage:
            entries[stage["alias"]] = (stage["entry"], stage["image"])
    close()
    return out


def _instructions(lines: list[str]):
    """(1-based line, instruction) with backslash continuations joined; comments skipped."""
    row = 0
    while row < len(lines):
        start, parts = row, [lines[row]]
        while parts[-1].rstrip().endswith("\\") and row + 1 < len(lines):
            parts[-1] = parts[-1].rstrip()[:-1]
            row += 1
            if not lines[row].lstrip().startswith("#"):
                parts.append(lines[row])
        if not parts[0].lstrip().startswith("#"):
            yield start + 1, " ".join(p.strip() for p in parts)
        row += 1


def _exec_words(rest: str, row: int) -> list[tuple[str | None, int]] | None:
    """An exec-form instruction's words (`["vllm", "serve"]`), None for the shell form."""
    value = exec_form(rest)
    return None if value is None else [(_word(v) if isinstance(v, str) else None, row) for v in value]


def exec_form(text: str) -> list | None:
    """The items of a JSON list (a Dockerfile's exec form, a YAML flow list written as JSON), None for anything else."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, list) else None
