"""A data-only codec between dataclasses and JSON, driven by `dataclasses.fields()` and the field types.

Cache entries must never be able to run code when read (a shared `--cache-dir`, a CI cache restored
from another branch), so they are JSON, not pickle. The codec is generic: it reads each dataclass's
fields and their annotations (nested dataclasses, list/set/tuple/dict, Optional and other unions,
Literal, Enum, str/int/float/bool), so a field added to a summary class needs no change here. A
dataclass is stored as a list of its field values in field order (compact and fast to decode), and
`layout` is a digest of the whole type graph: an entry written for another shape is refused, never
decoded into the wrong fields. Every value is checked against its declared type on the way in;
anything else raises `CodecError` (the cache treats that as a miss).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import types
import typing
from typing import Any, Callable

_NONE = type(None)
FORMAT = 1  # bump when the encoding itself changes (part of every layout digest)


class CodecError(ValueError):
    """The data does not match the declared types (a corrupt, foreign or stale entry)."""


def _bad(expected: str, value: Any) -> CodecError:
    return CodecError(f"expected {expected}, got {type(value).__name__}")


class Codec:
    """Encode/decode one root dataclass type (and everything reachable from its field types)."""

    def __init__(self, root: type):
        self.root = root
        self._enc: dict[Any, Callable[[Any], Any]] = {}
        self._dec: dict[Any, Callable[[Any], Any]] = {}
        self._shape: list[str] = []
        self._decode_root = self._decoder(root)
        self._encode_root = self._encoder(root)
        self.layout = hashlib.sha1("\n".join([f"datacodec/{FORMAT}", *self._shape]).encode()).hexdigest()[:16]

    # -------------------------------------------------------------------------------- public
    def encode(self, obj: Any) -> Any:
        """A JSON-ready structure (lists, dicts, str, numbers, None)."""
        return self._encode_root(obj)

    def decode(self, data: Any) -> Any:
        return self._decode_root(data)

    def dumps(self, obj: Any) -> bytes:
        return json.dumps([self.layout, self.encode(obj)], separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")

    def loads(self, raw: bytes) -> Any:
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise CodecError(f"not JSON ({type(exc).__name__})") from None
        if not (isinstance(doc, list) and len(doc) == 2 and doc[0] == self.layout):
            raise CodecError("another layout (written by another driftcheck version)")
        try:
            return self.decode(doc[1])
        except RecursionError:
            raise CodecError("nested too deeply") from None

    # ----------------------------------------------------------------------------- builders
    def _hints(self, cls: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls)
        except Exception as exc:  # an annotation that does not evaluate: a codec bug, say which
            raise TypeError(f"cannot read the field types of {cls.__qualname__}: {exc}") from None

    def _encoder(self, tp: Any) -> Callable[[Any], Any]:
        return self._build(tp, encoding=True)

    def _decoder(self, tp: Any) -> Callable[[Any], Any]:
        return self._build(tp, encoding=False)

    def _build(self, tp: Any, encoding: bool) -> Callable[[Any], Any]:
        cache = self._enc if encoding else self._dec
        if tp in cache:
            return cache[tp]
        sub = self._encoder if encoding else self._decoder
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            box: list[Callable[[Any], Any]] = []
            cache[tp] = lambda value: box[0](value)  # a self-referencing type resolves through the box
            typed = self._typed_fields(tp)
            if not encoding:
                self._shape.append(f"{tp.__module__}.{tp.__qualname__}(" + ",".join(f"{f.name}:{_type_name(t)}" for f, t in typed) + ")")
            fn = _generate(tp, typed, [sub(t) for _f, t in typed], encoding)
            box.append(fn)
        else:
            fn = self._container(tp, sub, encoding)
        cache[tp] = fn
        return fn

    def _typed_fields(self, cls: type) -> list[tuple[dataclasses.Field, Any]]:
        hints = self._hints(cls)
        return [(f, hints.get(f.name, Any)) for f in dataclasses.fields(cls)]

    def _container(self, tp: Any, sub: Callable[[Any], Callable], encoding: bool) -> Callable[[Any], Any]:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if tp is Any or tp is object:
            return _json_value
        if tp in _SCALARS:
            return _SCALARS[tp]
        if tp is _NONE or tp is None:
            return _none
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return (lambda v, cls=tp: _enum_value(cls, v)) if encoding else (lambda v, cls=tp: _enum_member(cls, v))
        if origin is typing.Literal:
            allowed = set(args)
            return lambda v: v if v in allowed and type(v) in (str, int, bool, _NONE) else _raise(_bad(f"one of {sorted(map(repr, allowed))}", v))
        if origin in (typing.Union, types.UnionType):
            return self._union(args, sub)
        if origin in (list, set, frozenset) or tp in (list, set, frozenset):
            item = sub(args[0] if args else Any)
            kind = origin or tp
            if encoding:
                return lambda v, kind=kind: [item(x) for x in v] if isinstance(v, kind) else _raise(_bad(kind.__name__, v))
            if kind is list:
                return lambda v: [item(x) for x in v] if type(v) is list else _raise(_bad("list", v))
            return lambda v, kind=kind: kind(item(x) for x in v) if type(v) is list else _raise(_bad("list", v))
        if origin is tuple or tp is tuple:
            if not args or (len(args) == 2 and args[1] is Ellipsis):
                item = sub(args[0] if args else Any)
                if encoding:
                    return lambda v: [item(x) for x in v] if isinstance(v, tuple) else _raise(_bad("tuple", v))
                return lambda v: tuple(item(x) for x in v) if type(v) is list else _raise(_bad("list", v))
            if args == ((),):
                args = ()
            items = [sub(a) for a in args]
            n = len(items)
            if encoding:
                return lambda v: [f(x) for f, x in zip(items, v)] if isinstance(v, tuple) and len(v) == n else _raise(_bad(f"{n}-tuple", v))
            return lambda v: tuple(f(x) for f, x in zip(items, v)) if type(v) is list and len(v) == n else _raise(_bad(f"{n}-list", v))
        if origin is dict or tp is dict:
            key_t, val_t = args if args else (Any, Any)
            val = sub(val_t)
            if key_t is str:
                if encoding:
                    return lambda v: {_str_key(k): val(x) for k, x in v.items()} if isinstance(v, dict) else _raise(_bad("dict", v))
                return lambda v: {k: val(x) for k, x in v.items()} if type(v) is dict else _raise(_bad("object", v))
            key = sub(key_t)
            if encoding:  # keys that JSON cannot hold as object keys: a list of pairs
                return lambda v: [[key(k), val(x)] for k, x in v.items()] if isinstance(v, dict) else _raise(_bad("dict", v))
            return lambda v: {key(_pair(p)[0]): val(p[1]) for p in v} if type(v) is list else _raise(_bad("list of pairs", v))
        raise TypeError(f"driftcheck.storage.datacodec cannot store values of type {tp!r}; give the field a data type "
                        "(str, int, float, bool, None, list, tuple, set, dict, a dataclass, an Enum)")

    def _union(self, args: tuple, sub: Callable[[Any], Callable]) -> Callable[[Any], Any]:
        arms = [a for a in args if a is not _NONE]
        optional = len(arms) < len(args)
        if len(arms) == 1:
            inner = sub(arms[0])
            return (lambda v: None if v is None else inner(v)) if optional else inner
        # Several arms: the first that accepts the value (on both sides, in declaration order). Scalars
        # are exact (True is not an int here), so `int | str` and `str | None` round-trip exactly.
        fns = [sub(a) for a in arms]

        def first(v: Any) -> Any:
            if v is None and optional:
                return None
            for fn in fns:
                try:
                    return fn(v)
                except CodecError:
                    continue
            raise _bad(" | ".join(_type_name(a) for a in args), v)

        return first


def _inline_check(tp: Any, v: str) -> str | None:
    """A Python condition that is true when `v` is NOT a valid `tp`, for the scalar types checked in line
    (a function call per scalar was most of the decode time); None: call the type's own function."""
    if tp in (str, int, bool):
        return f"type({v}) is not {tp.__name__}"
    if tp is _NONE:
        return f"{v} is not None"
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        arms = [a for a in args if a is not _NONE]
        if len(arms) == 1 and len(args) == 2 and arms[0] in (str, int, bool):
            return f"{v} is not None and type({v}) is not {arms[0].__name__}"
    return None


def _generate(cls: type, typed: list, subs: list[Callable[[Any], Any]], encoding: bool) -> Callable[[Any], Any]:
    """The encoder or decoder of one dataclass, as straight-line Python built from its own field types
    (never from stored data): positional list <-> fields, scalars checked in line."""
    n = len(typed)
    env: dict[str, Any] = {"cls": cls, "bad": _bad, "new": object.__new__, "setattr": object.__setattr__}
    names = [f.name for f, _t in typed]
    qual = repr(cls.__qualname__)
    body: list[str] = []
    for i, ((f, tp), sub) in enumerate(zip(typed, subs)):
        v = f"v{i}"
        if encoding:
            body.append(f"    {v} = obj.{f.name}")
        check = _inline_check(tp, v)
        if check is not None:
            body.append(f"    if {check}: raise bad({qual} + '.' + {f.name!r} + ': ' + {_type_name(tp)!r}, {v})")
        else:
            env[f"f{i}"] = sub
            body.append(f"    {v} = f{i}({v})")
    values = ", ".join(f"v{i}" for i in range(n))
    if encoding:
        src = ["def enc(obj):", f"    if type(obj) is not cls: raise bad({qual}, obj)", *body, f"    return [{values}]"]
    else:
        src = ["def dec(data):", f"    if type(data) is not list or len(data) != {n}: raise bad({qual} + ' ({n} fields)', data)"]
        if n:
            src.append(f"    {values}, = data")
        src += body
        # a stored snapshot: restore the fields without __init__/__post_init__, as pickle did
        src.append("    obj = new(cls)")
        if "__slots__" in cls.__dict__:
            src += [f"    setattr(obj, {name!r}, v{i})" for i, name in enumerate(names)]
        else:
            src.append("    obj.__dict__.update({" + ", ".join(f"{name!r}: v{i}" for i, name in enumerate(names)) + "})")
        src.append("    return obj")
    exec(compile("\n".join(src), f"<datacodec {cls.__qualname__}>", "exec"), env)  # noqa: S102 - our own code
    return env["enc" if encoding else "dec"]


def _type_name(tp: Any) -> str:
    return repr(tp)


def _raise(exc: Exception):
    raise exc


def _pair(p: Any) -> Any:
    if type(p) is not list or len(p) != 2:
        raise _bad("a [key, value] pair", p)
    return p


def _str_key(k: Any) -> str:
    if type(k) is not str:
        raise _bad("str key", k)
    return k


def _none(v: Any) -> None:
    if v is not None:
        raise _bad("None", v)
    return None


def _exact(tp: type) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if type(v) is not tp:
            raise _bad(tp.__name__, v)
        return v

    return check


def _float(v: Any) -> float:
    if type(v) is float:
        return v
    if type(v) is int:
        return float(v)
    raise _bad("float", v)


_SCALARS: dict[Any, Callable[[Any], Any]] = {str: _exact(str), int: _exact(int), bool: _exact(bool), float: _float}


def _enum_value(cls: type, v: Any) -> Any:
    if not isinstance(v, cls):
        raise _bad(cls.__qualname__, v)
    return _json_value(v.value)


def _enum_member(cls: type, v: Any) -> Any:
    try:
        return cls(v)
    except (ValueError, TypeError):
        raise _bad(cls.__qualname__, v) from None


def _json_value(v: Any) -> Any:
    """A field typed Any: accepted only when it is already plain JSON data (no objects, no tuples)."""
    t = type(v)
    if t in (str, int, bool, _NONE) or (t is float and v == v and v not in (float("inf"), float("-inf"))):
        return v
    if t is list:
        return [_json_value(x) for x in v]
    if t is dict:
        return {_str_key(k): _json_value(x) for k, x in v.items()}
    raise _bad("plain JSON data", v)
