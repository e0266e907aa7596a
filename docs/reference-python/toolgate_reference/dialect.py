"""The schema dialect of docs/spec.md §14: arguments as I-JSON (R14.6), the nesting limit (R14.3),
asserted formats (R14.5), RE2 patterns (R14.4), validation and its normative pointers (R14.8)."""

import json
import math
import re

from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker, ValidationError, validators
from jsonschema import _utils

from . import re2_patterns

MAX_NESTING = 64
MAX_SAFE_INTEGER = 2**53 - 1
DRAFT_07 = ("http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-07/schema#")
DRAFT_2020 = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")


class InvalidJson(ValueError):
    pass


# --- R7.5 / R14.6: reading arguments ------------------------------------------------------------


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise InvalidJson("a member name appears twice in one object")
        out[k] = v
    return out


def _int(text):
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise InvalidJson("an integer beyond 2^53 - 1")
    return value


def _float(text):
    value = float(text)
    if math.isinf(value):
        raise InvalidJson("a number that overflows a double")
    return value


def _constant(name):
    raise InvalidJson("%s is not JSON" % name)


def _lone_surrogate(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                return True
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            for k, child in v.items():
                if any(0xD800 <= ord(c) <= 0xDFFF for c in k):
                    return True
                stack.append(child)
    return False


def depth_of(value):
    """Nesting of arrays and objects, the outermost counting 1 (iterative)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            stack.extend((c, d + 1) for c in (v if isinstance(v, list) else v.values()))
    return deepest


def value_status(value):
    """R14.6 for arguments handed over as a value: 'ok' | 'invalid_json' | 'too_deep' (R7.5 order).

    Only a JSON value: dict with str keys, list, str and keys without a lone surrogate, bool, None,
    int, finite float. A dict or list that contains itself is a cycle (invalid_json); one shared in
    several places is walked once and counts once per place for nesting. Iterative, post-order."""
    height = {}  # id -> height once walked; ON_PATH while it is being walked
    on_path = -1

    def scalar_ok(v):
        if v is None or isinstance(v, bool) or isinstance(v, int):
            return True
        if isinstance(v, float):
            return math.isfinite(v)
        if isinstance(v, str):
            return not any(0xD800 <= ord(c) <= 0xDFFF for c in v)
        return False

    if not isinstance(value, (dict, list)):
        return "ok" if scalar_ok(value) else "invalid_json"
    if type(value) not in (dict, list):
        return "invalid_json"
    frames = [[value, iter(value.items() if isinstance(value, dict) else enumerate(value)), 1]]
    height[id(value)] = on_path
    top = 0
    while frames:
        frame = frames[-1]
        step = next(frame[1], None)
        if step is None:
            frames.pop()
            height[id(frame[0])] = frame[2]
            if frames:
                frames[-1][2] = max(frames[-1][2], frame[2] + 1)
            else:
                top = frame[2]
            continue
        key, child = step
        if isinstance(frame[0], dict) and (not isinstance(key, str) or not scalar_ok(key)):
            return "invalid_json"
        if type(child) in (dict, list):
            known = height.get(id(child))
            if known == on_path:
                return "invalid_json"
            if known is not None:
                frame[2] = max(frame[2], known + 1)
                continue
            height[id(child)] = on_path
            frames.append([child, iter(child.items() if isinstance(child, dict) else enumerate(child)), 1])
        elif not scalar_ok(child):
            return "invalid_json"
    return "too_deep" if top > MAX_NESTING else "ok"


def text_depth(text):
    """Nesting of valid JSON text, counted on the text (no parser recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def parse_arguments(text):
    """('ok', value) | ('invalid_json', None) | ('too_deep', None), as R7.5 orders them."""
    # A parser recurses; count the nesting first so a deep text cannot exhaust the stack, and
    # only then decide validity (invalid JSON wins over depth, R7.5).
    deep = text_depth(text) > MAX_NESTING
    if deep:
        return ("too_deep", None) if _valid_json_shallowly(text) else ("invalid_json", None)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except (ValueError, RecursionError):
        return "invalid_json", None
    if _lone_surrogate(value):
        return "invalid_json", None
    return "ok", value


def _valid_json_shallowly(text):
    """Whether deep text is JSON (and I-JSON): the containers replaced by a flat token walk."""
    scanner = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)
    # Strings, numbers and literals are checked one by one; brackets by a stack.
    ws = " \t\n\r"
    i, n = 0, len(text)
    stack = []
    expect_value = True
    keys = []
    try:
        while True:
            while i < n and text[i] in ws:
                i += 1
            if i >= n:
                return not stack and not expect_value
            c = text[i]
            if expect_value:
                if c in "[{":
                    stack.append(c)
                    keys.append(set() if c == "{" else None)
                    i += 1
                    j = i
                    while j < n and text[j] in ws:
                        j += 1
                    if j < n and text[j] == ("]" if c == "[" else "}"):
                        stack.pop()
                        keys.pop()
                        i = j + 1
                        expect_value = False
                        continue
                    if c == "{":
                        i = _member_name(scanner, text, j, keys[-1])
                    continue
                value, i = scanner.raw_decode(text, i)
                if _lone_surrogate(value):
                    return False
                expect_value = False
                continue
            if not stack:
                return False
            if c == ",":
                i += 1
                expect_value = True
                if stack[-1] == "{":
                    while i < n and text[i] in ws:
                        i += 1
                    i = _member_name(scanner, text, i, keys[-1])
                continue
            if c == ("]" if stack[-1] == "[" else "}"):
                stack.pop()
                keys.pop()
                i += 1
                continue
            return False
    except (ValueError, IndexError):
        return False


def _member_name(scanner, text, i, seen):
    if text[i] != '"':
        raise ValueError("expected a member name")
    name, i = scanner.raw_decode(text, i)
    if not isinstance(name, str) or name in seen or _lone_surrogate(name):
        raise ValueError("bad member name")
    seen.add(name)
    while text[i] in " \t\n\r":
        i += 1
    if text[i] != ":":
        raise ValueError("expected :")
    return i + 1


# --- R14.5: asserted formats --------------------------------------------------------------------

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))\Z")
_DURATION = re.compile(
    r"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?"
    r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)\Z"
)
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*\Z")
_IPV4 = re.compile(r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\Z")
_HEX_GROUP = re.compile(r"[0-9A-Fa-f]{1,4}\Z")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~!$&'()*+,;=:@/?#\[\]-]|%[0-9A-Fa-f]{2})*\Z")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\Z")


def is_date(s):
    m = _DATE.match(s)
    if not m:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]


def is_time(s):
    m = _TIME.match(s)
    if not m:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if hour > 23 or minute > 59 or second > 59:
        return False
    return m.group(4) is None or (int(m.group(4)) <= 23 and int(m.group(5)) <= 59)


def is_date_time(s):
    return len(s) > 10 and s[10] in "Tt" and is_date(s[:10]) and is_time(s[11:])


def is_hostname(s):
    return 1 <= len(s) <= 253 and all(_LABEL.match(label) for label in s.split("."))


def is_email(s):
    at = s.rfind("@")
    return 0 < at <= 64 and bool(_LOCAL.match(s[:at])) and is_hostname(s[at + 1 :])


def is_ipv6(s):
    taken = 0
    colon = s.rfind(":")
    if colon >= 0 and "." in s[colon:]:
        if not _IPV4.match(s[colon + 1 :]):
            return False
        s = s[: colon + 1] + "0"
        taken = 1
    halves = s.split("::")
    if len(halves) > 2:
        return False

    def groups(part):
        return [] if part == "" else part.split(":")

    if len(halves) == 1:
        all_groups = groups(s)
        return len(all_groups) == 8 - taken and all(_HEX_GROUP.match(g) for g in all_groups)
    head, tail = groups(halves[0]), groups(halves[1])
    return len(head) + len(tail) <= 7 - taken and all(_HEX_GROUP.match(g) for g in head + tail)


FORMATS = {
    "date-time": is_date_time,
    "date": is_date,
    "time": is_time,
    "duration": lambda s: bool(_DURATION.match(s)),
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": lambda s: bool(_IPV4.match(s)),
    "ipv6": is_ipv6,
    "uri": lambda s: bool(_URI.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "regex": re2_patterns.is_valid,
}

FORMAT_CHECKER = FormatChecker(formats=())
for _name, _test in FORMATS.items():
    FORMAT_CHECKER.checks(_name)(lambda value, _test=_test: not isinstance(value, str) or _test(value))


# --- The keywords whose reading the spec fixes beyond what the library does ----------------------


def _member_error(keyword, name, message):
    e = ValidationError(message)
    e.toolgate_member = name
    return e


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not re2_patterns.search(pattern, instance):
        yield ValidationError("does not match the pattern")


def _pattern_properties(validator, patterns, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for k, v in instance.items():
            if re2_patterns.search(pattern, k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _evaluated_by_properties(schema, name):
    if name in schema.get("properties", {}):
        return True
    return any(re2_patterns.search(p, name) for p in schema.get("patternProperties", {}))


def _additional_properties(validator, additional, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for name in instance:
        if _evaluated_by_properties(schema, name):
            continue
        if additional is False:
            yield _member_error("additionalProperties", name, "is not allowed")
        else:
            yield from validator.descend(instance[name], additional, path=name)


def _rest_fails(validator, instance, schema):
    """R14.8: what `unevaluated*` reports is normative only when the rest of its schema passes
    (which members a failing subschema evaluated is not something two validators agree on)."""
    rest = {k: v for k, v in schema.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}
    return next(validator.evolve(schema=rest).iter_errors(instance), None) is not None


def _unevaluated_properties(validator, unevaluated, instance, schema):
    if not validator.is_type(instance, "object") or _rest_fails(validator, instance, schema):
        return
    evaluated = _utils.find_evaluated_property_keys_by_schema(validator, instance, schema)
    for name in instance:
        if name in evaluated:
            continue
        if unevaluated is False:
            yield _member_error("unevaluatedProperties", name, "is not allowed")
        else:
            yield from validator.descend(instance[name], unevaluated, path=name)


def _unevaluated_items(validator, unevaluated, instance, schema):
    # The library's own (4.10) sorts the items for its message, which fails on mixed types, and
    # refuses any unevaluated item even when the subschema would accept it.
    if not validator.is_type(instance, "array") or _rest_fails(validator, instance, schema):
        return
    evaluated = _utils.find_evaluated_item_indexes_by_schema(validator, instance, schema)
    rest = [i for i in range(len(instance)) if i not in evaluated]
    if unevaluated is False:
        if rest:
            yield ValidationError("has items that are not allowed")
        return
    for i in rest:
        yield from validator.descend(instance[i], unevaluated, path=i)


def _required(validator, required, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for name in required:
        if name not in instance:
            yield _member_error("required", name, "is required")


def _dependent_required(validator, dependent, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for name, needs in dependent.items():
        if name in instance:
            for other in needs:
                if other not in instance:
                    yield _member_error("dependentRequired", other, "is required")


def _dependencies(validator, dependencies, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for name, dependency in dependencies.items():
        if name not in instance:
            continue
        if isinstance(dependency, list):
            for other in dependency:
                if other not in instance:
                    yield _member_error("dependencies", other, "is required")
        else:
            yield from validator.descend(instance, dependency, schema_path=name)


def _multiple_of(validator, m, instance, schema):
    if not validator.is_type(instance, "number"):
        return
    q = float(instance) / float(m)
    if not (math.isfinite(q) and q == math.floor(q)):
        yield ValidationError("must be a multiple of %r" % m)


_OVERRIDES = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "required": _required,
    "multipleOf": _multiple_of,
}

Validator2020 = validators.extend(Draft202012Validator, {**_OVERRIDES, "unevaluatedProperties": _unevaluated_properties, "unevaluatedItems": _unevaluated_items, "dependentRequired": _dependent_required})
# R14.1: draft-07 as its specification reads, except that `$ref` applies beside its siblings, as
# in 2020-12 (the library's draft-07 would ignore them). 2020-12-only keywords are annotations.
Validator07 = validators.create(
    meta_schema=Draft7Validator.META_SCHEMA,
    validators={**Draft7Validator.VALIDATORS, **_OVERRIDES, "dependencies": _dependencies},
    type_checker=Draft7Validator.TYPE_CHECKER,
    version="toolgate-draft7",
)


# --- R14.2: what a schema may not hold ----------------------------------------------------------

_ONE = {"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems", "unevaluatedItems", "contains", "contentSchema", "not", "if", "then", "else"}
_MAP = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
_LIST = {"prefixItems", "allOf", "anyOf", "oneOf"}
_DYNAMIC = {"$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$anchor"}


def _escape(token):
    return token.replace("~", "~0").replace("/", "~1")


def schema_problem(schema):
    """Why a schema is outside the dialect (a short text), or None."""
    if not isinstance(schema, dict):
        return "not a schema object"
    if "$schema" in schema and schema["$schema"] not in DRAFT_07 + DRAFT_2020:
        return "unknown $schema"
    if depth_of(schema) > MAX_NESTING:
        return "nests too deep"
    places = set()
    refs = []
    stack = [(schema, "")]
    while stack:
        node, at = stack.pop()
        places.add(at)
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            here = at + "/" + _escape(key)
            if key in _DYNAMIC:
                return "%s at %s" % (key, here)
            if key == "$id" and (at != "" or ("#" in str(value) and not str(value).endswith("#"))):
                return "$id at %s" % here
            if key == "pattern" and isinstance(value, str) and not re2_patterns.is_valid(value):
                return "pattern at %s" % here
            if key == "$ref":
                refs.append(value)
                continue
            if key in _ONE:
                if isinstance(value, list):
                    stack.extend((v, "%s/%d" % (here, i)) for i, v in enumerate(value))
                else:
                    stack.append((value, here))
            elif key in _LIST and isinstance(value, list):
                stack.extend((v, "%s/%d" % (here, i)) for i, v in enumerate(value))
            elif (key in _MAP or key == "dependencies") and isinstance(value, dict):
                for name, sub in value.items():
                    if key == "patternProperties" and not re2_patterns.is_valid(name):
                        return "patternProperties name at %s" % here
                    if key == "dependencies" and isinstance(sub, list):
                        continue
                    stack.append((sub, here + "/" + _escape(name)))
    for ref in refs:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            return "$ref %r" % (ref,)
        from urllib.parse import unquote

        target = "/".join(_escape(p.replace("~1", "/").replace("~0", "~")) if i else p for i, p in enumerate(unquote(ref[1:]).split("/")))
        if target not in places:
            return "$ref %r points where no subschema stands" % ref
    return None


def validator_for(schema):
    """A validator for a schema of the dialect, or None when the schema is outside it (R14.2)."""
    if schema_problem(schema) is not None:
        return None
    cls = Validator07 if schema.get("$schema") in DRAFT_07 else Validator2020
    try:
        cls.check_schema(schema)
    except Exception:
        return None
    return cls(schema, format_checker=FORMAT_CHECKER)


def _pointer(tokens):
    return "".join("/" + _escape(str(t)) for t in tokens)


def normative_pointers(validator, value):
    """R14.8: the pointer of every failing assertion the spec makes normative (a set)."""
    out = set()
    for e in validator.iter_errors(value):
        path = list(e.absolute_path)
        member = getattr(e, "toolgate_member", None)
        if member is not None:
            if e.validator in ("required", "dependentRequired", "dependencies") or FIELD_NAME.match(member):
                path.append(member)
        out.add(_pointer(path))
    return out
