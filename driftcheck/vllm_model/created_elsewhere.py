"""Attributes other code creates on an object: `obj.name = ...` outside its class, `setattr` and
`register_*` with names computed from a template (read from the raw text of the tree).
"""

from __future__ import annotations

import re

from driftcheck.vllm_model.resolved import Resolved


class CreatedElsewhere:
    """Members assigned from outside a class."""

    def assigned_from_outside(self, name: str) -> tuple[str, int] | None:
        """Where some code of the tree creates attribute `name` on another object (`layer.name = ...`,
        `layer.register_parameter("name", ...)`, `setattr(obj, "name", ...)`): quantization methods and
        loaders add weights to modules this way, so such a member exists once that code ran."""
        if name in self._outside:
            return self._outside[name]
        from driftcheck.vllm_model.bodies import text_index_for

        index = text_index_for(self)
        word = re.escape(name.encode())
        pattern = re.compile(rb"(\w+)\." + word + rb"\s*(?::[^=\n]+)?=(?!=)|(?:register_(?:parameter|buffer|module)|add_module)"
                             rb"\(\s*[\"']" + word + rb"[\"']|setattr(?:__)?\([^,\n]+,\s*[\"']" + word + rb"[\"']")
        # `pattern` starts with no literal, so re tries it at every byte (1.4 s over 0.23.0 for a name in 300 files); a
        # file can match it only where one of its branches, each searched from its own literal, matches
        branches = [re.compile(rb"\." + word + rb"\s*(?::[^=\n]+)?=(?!=)"),
                    re.compile(rb"\(\s*[\"']" + word + rb"[\"']"), re.compile(rb"setattr(?:__)?\([^,\n]+,\s*[\"']" + word + rb"[\"']")]
        literal = re.compile(rb"[\"']" + word + rb"[\"']")
        named_call = re.compile(rb"(?<!\w)(\w+)\(\s*[\w.]+\s*,\s*[\"']" + word + rb"[\"']")
        found = None
        for rel in index.files_mentioning(name):
            data = index.blob(rel)
            for m in pattern.finditer(data) if any(b.search(data) for b in branches) else ():
                if m.group(1) == b"self":
                    continue  # `self.name = ...` belongs to that class, which its summary already has
                found = (rel, data.count(b"\n", 0, m.start()) + 1)
                break
            m = literal.search(data) if found is None else None
            if m is not None and (_COMPUTED_SETATTR.search(data) or any(
                    self._sets_named_attribute(c.group(1).decode()) for c in _COMPUTED_NAME_CALL.finditer(data))):
                # `for n, t in (("W_K", w),): setattr(layer, n, t)` or `replace_parameter(self, n, t)`
                found = (rel, data.count(b"\n", 0, m.start()) + 1)
            if found is None and m is not None:  # `replace_parameter(self, "W_UK_T", ...)`: a helper that sets the attribute it is named
                for m in named_call.finditer(data):
                    if self._sets_named_attribute(m.group(1).decode()):
                        found = (rel, data.count(b"\n", 0, m.start()) + 1)
                        break
            if found:
                break
        if found is None:  # `register_parameter(f"w13_{self.weight_scale_name}", ...)`: a name built from a template
            for rel, line, pattern in index.remember("name-templates:v1", lambda: _name_templates(index)):
                if re.fullmatch(pattern, name):
                    found = (rel, line)
                    break
        self._outside[name] = found
        return found

    def read_by_name(self, name: str) -> tuple[str, int] | None:
        """Where vLLM's own code reads attribute `name` by its string, as a member the object it is handed may or
        may not have (`getattr(layer, "is_bmm", False)`, `hasattr(layer, "is_bmm")`): a flag a caller sets on the
        object for vLLM to find, so a store of it is read."""
        cache = self.__dict__.setdefault("_read_by_name", {})
        if name not in cache:
            from driftcheck.vllm_model.bodies import text_index_for

            index = text_index_for(self)
            pattern = re.compile(rb"(?<!\w)(?:getattr|hasattr)\(\s*[\w.]+\s*,\s*[\"']" + re.escape(name.encode()) + rb"[\"']")
            found = None
            for rel in index.files_mentioning(name):
                if rel.split("/")[0] != self.package:
                    continue
                data = index.blob(rel)
                m = pattern.search(data)
                if m is not None:
                    found = (rel, data.count(b"\n", 0, m.start()) + 1)
                    break
            cache[name] = found
        return cache[name]

    def _aliases_of(self, cls: Resolved) -> list[str]:
        mod = cls.module
        short = cls.qualname.rsplit(".", 1)[-1]
        if mod is None:
            return []
        return [n for n, b in mod.bindings.items() if b.kind == "alias" and b.target.rsplit(".", 1)[-1] == short and n != short]

    def _sets_named_attribute(self, function: str) -> bool:
        """Whether a function of the tree named `function` sets an attribute by a name it is given."""
        if self._setters is None:
            from driftcheck.vllm_model.bodies import text_index_for

            index = text_index_for(self)
            self._setters = frozenset(index.remember("attribute-setters:v1", lambda: _attribute_setters(index)))
        return function in self._setters


def _attribute_setters(index) -> list[str]:
    """The names of the tree's top-level `def`s that set an attribute by a computed name within their first 40 lines
    (`setattr(layer, name, ...)`): one pass over the few files that do so, instead of a search of the whole tree
    for every helper name a file calls."""
    out: set[str] = set()
    for rel, data in index.blobs().items():
        if (b"setattr" not in data and b"register_" not in data) or not _COMPUTED_SETATTR.search(data):
            continue  # a window of the file can only match where the file does
        lines = None
        for m in _TOP_LEVEL_DEF.finditer(b"\n" + data):
            lines = lines or data.split(b"\n")
            line = data.count(b"\n", 0, m.start()) + 1
            if _COMPUTED_SETATTR.search(b"\n".join(lines[line - 1:line + 40])):
                out.add(m.group(1).decode())
    return sorted(out)


_TOP_LEVEL_DEF = re.compile(rb"\ndef\s+(\w+)\b")  # as TextIndex.top_level_definitions finds a `def` (not `async def`)


_COMPUTED_SETATTR = re.compile(rb"setattr(?:__)?\(\s*[\w.]+\s*,\s*[A-Za-z_]|register_(?:parameter|buffer|module)\(\s*[A-Za-z_]")


# `(?<!\w)`: a match starts where a word does (as the leftmost match always did), so re does not try every byte of it
_COMPUTED_NAME_CALL = re.compile(rb"(?<!\w)(\w+)\(\s*[\w.]+\s*,\s*[A-Za-z_]\w*\s*[,)]")


_FSTRING = re.compile(rb"""\bf(["'])([^"'\n]*\{[^}\n]*\}[^"'\n]*)\1""")


def _name_templates(index) -> list[list]:
    """[file, line, regex] for each f-string in a file that sets attributes by computed names: the names it
    can build (`f"w13_{x}"` -> `w13_\\w+`). One pass over the tree, kept with its text answers."""
    out = []
    for rel, data in index.blobs().items():
        if b'f"' not in data and b"f'" not in data or not _COMPUTED_SETATTR.search(data):
            continue
        for m in _FSTRING.finditer(data):
            pieces = re.split(rb"\{[^}]*\}", m.group(2))
            if len(b"".join(pieces)) < 3 or not all(re.fullmatch(rb"\w*", p) for p in pieces):
                continue  # `f"{x}"` says nothing; a template with spaces or dots is no attribute name
            pattern = r"\w*".join(re.escape(p.decode()) for p in pieces)
            out.append([rel, data.count(b"\n", 0, m.start()) + 1, pattern])
    return out
