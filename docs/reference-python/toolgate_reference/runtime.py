"""evaluate (§6), decide (§7), redact (§10) and conformance vectors (§12) over a bundle's content.

Bundles of format toolgate.bundle/v2 (shared input schemas by position, defaults left out, no
index) and toolgate.bundle/v1 (everything written out, an index) read alike: the lookups R2.4
describes are derived here from catalog and policy, never read from an index.
Verification (§5: signature, canonical bytes, revision) is not part of this reference.
"""

import hashlib
import json
import re
import uuid
from datetime import datetime, timezone

from . import dialect

FORMATS = ("toolgate.bundle/v2", "toolgate.bundle/v1")
FIELD_NAME = dialect.FIELD_NAME


def _instant_ms(text):
    """R1.3: an RFC 3339 instant, compared with millisecond precision."""
    t = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000) if t.microsecond % 1000 == 0 else int(t.timestamp() * 1000)


def glob_matches(glob, tool_id):
    """R2.4: `*` matches any run of characters (possibly empty); everything else itself."""
    return re.fullmatch("".join(".*" if c == "*" else re.escape(c) for c in glob), tool_id, re.S) is not None


class Bundle:
    def __init__(self, doc):
        if doc.get("format") not in FORMATS:
            raise ValueError("unknown format")
        catalog, policy = doc["catalog"], doc["policy"]
        shared = catalog.get("schemas", [])
        self.tools = []
        for entry in catalog["tools"]:
            if "excluded" in entry:
                self.tools.append({"id": entry["id"], "excluded": entry["excluded"]})
                continue
            tool = dict(entry)
            if ("inputSchemaRef" in tool) == ("inputSchema" in tool):
                raise ValueError("tool %s needs exactly one of inputSchema and inputSchemaRef (R2.7)" % tool["id"])
            if "inputSchemaRef" in tool:
                ref = tool.pop("inputSchemaRef")
                if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < len(shared):
                    raise ValueError("tool %s names a schema catalog.schemas does not have (R2.7)" % tool["id"])
                tool["inputSchema"] = shared[ref]
            tool.setdefault("description", "")
            tool.setdefault("groups", ["default"])
            tool.setdefault("requiresConnection", False)
            self.tools.append(tool)
        ids = [t["id"] for t in self.tools]
        if ids != sorted(ids, key=_utf16) or len(set(ids)) != len(ids):
            raise ValueError("catalog ids are not strictly ascending")
        self.by_id = {t["id"]: t for t in self.tools}
        includes = {g["name"]: g.get("includes", []) for g in catalog.get("groups", [])}
        for name, inc in includes.items():
            for other in inc:
                if other not in includes:
                    raise ValueError("group %s includes %s, which is not in catalog.groups (R2.3)" % (name, other))
        self.closure = {name: _closure(name, includes) for name in includes}
        self.roles = {}
        for name, role in policy.get("roles", {}).items():
            groups = role.get("groups", [])
            self.roles[name] = {
                "groups": ["*"] if "*" in groups else sorted({x for g in groups for x in self.closure.get(g, [g])}, key=_utf16),
                "allow": {i for i in ids if any(glob_matches(g, i) for g in role.get("allow", []))},
                "deny": {i for i in ids if any(glob_matches(g, i) for g in role.get("deny", []))},
                "requireApproval": set(role.get("requireApproval", [])),
                "constraints": role.get("constraints", []),
            }
        self.bindings = policy.get("bindings", {})
        for subject, names in self.bindings.items():
            for name in names:
                if name not in self.roles:
                    raise ValueError("%s is bound to role %s, which policy.roles does not define (R2.3)" % (subject, name))
        self.profiles = policy.get("profiles", {})
        self.profile_scoped = {i for p in self.profiles.values() for i in p.get("enable", [])}
        self.grants = [dict(g, matched={i for i in ids if any(glob_matches(x, i) for x in g["tools"])}) for g in policy.get("grants", [])]
        self._validators = {}
        if doc["format"] == "toolgate.bundle/v1":
            self._check_v1_index(doc.get("index"), ids)

    def _check_v1_index(self, index, ids):
        """R2.9: a v1 bundle's index must say exactly what R2.4 derives, or the bundle is refused."""
        if not isinstance(index, dict):
            raise ValueError("a v1 bundle without its index")
        by_position = lambda found: [i for i in ids if i in found]  # noqa: E731
        derived = {
            "tools": ids,
            "groups": self.closure,
            "roles": {n: {"groups": r["groups"], "allow": by_position(r["allow"]), "deny": by_position(r["deny"])} for n, r in self.roles.items()},
            "grants": [{"connectionId": g["connectionId"], "tools": by_position(g["matched"])} for g in self.grants],
            "profileScoped": sorted(self.profile_scoped & set(ids), key=_utf16),
        }
        for key, value in derived.items():
            if index.get(key) != value:
                raise ValueError("index.%s disagrees with catalog and policy (R2.9)" % key)

    def validator(self, schema):
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            self._validators[key] = dialect.validator_for(schema)
        return self._validators[key]


def _utf16(s):
    """R1.2: order by UTF-16 code units."""
    return s.encode("utf-16-be")


def _closure(name, includes):
    seen, todo = {name}, [name]
    while todo:
        for nxt in includes.get(todo.pop(), []):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(seen, key=_utf16)


def _json_equal(a, b):
    """R6.11: same JSON type and value (1, "1" and true differ; 1 and 1.0 do not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def evaluate(bundle, request):
    """§6. Returns the answer and, per tool id, the decision of each visible tool."""
    at = _instant_ms(request["at"]) if "at" in request else int(datetime.now(timezone.utc).timestamp() * 1000)
    subject = request["subject"]
    roles = list(bundle.bindings[subject]) if subject in bundle.bindings else []
    requested = request.get("groups", ["default"])
    expanded = sorted({x for g in requested for x in bundle.closure.get(g, [g])}, key=_utf16)
    state = request.get("state", "undefined")
    answer = {"roles": roles, "groups": expanded, "state": state, "tools": [], "filtered": []}
    if not roles:
        answer["filtered"] = [{"id": t["id"], "reason": "no_role"} for t in bundle.tools]
        return answer
    any_group = any(bundle.roles[r]["groups"] == ["*"] for r in roles)
    permitted = {g for r in roles for g in bundle.roles[r]["groups"]}
    refused = []
    for g in requested:
        ok = any_group or (g != "*" and g in permitted)
        if not ok and g not in refused:
            refused.append(g)
    if refused:
        answer["rejected"] = {"reason": "group_not_permitted", "groups": refused}
        return answer
    facts = request.get("facts", {})
    profile = bundle.profiles.get(request["profile"]) if "profile" in request and request["profile"] in bundle.profiles else None
    allowed_ids = request.get("allowedConnectionIds")
    for t in bundle.tools:
        reason = _filter_reason(bundle, t, roles, expanded, state, facts, profile, allowed_ids, at, subject)
        if reason:
            answer["filtered"].append({"id": t["id"], "reason": reason})
            continue
        decision = "require_approval" if any(t["effect"] in bundle.roles[r]["requireApproval"] for r in roles) else "allow"
        entry = {"id": t["id"], "decision": decision}
        named = [
            {"role": r, "index": i, "otherwise": c["otherwise"], "reason": c["reason"]}
            for r in roles
            for i, c in enumerate(bundle.roles[r]["constraints"])
            if any(glob_matches(g, t["id"]) for g in c["tools"])
        ]
        if named:
            entry["constraints"] = named
        answer["tools"].append(entry)
    return answer


def _filter_reason(bundle, t, roles, expanded, state, facts, profile, allowed_ids, at, subject):
    if "excluded" in t:
        return t["excluded"]
    if "*" not in expanded and not set(t["groups"]) & set(expanded):
        return "group"
    states = t.get("availableInStates")
    if states is not None and "*" not in states and state not in states:
        return "state"
    if any(t["id"] in bundle.roles[r]["deny"] for r in roles):
        return "denied"
    if not any(t["id"] in bundle.roles[r]["allow"] for r in roles):
        return "not_allowed"
    for gate in t.get("requires", []):
        if gate["fact"] not in facts or not any(_json_equal(facts[gate["fact"]], v) for v in gate["in"]):
            return "runtime_gate"
    scoped = t["id"] in bundle.profile_scoped
    if profile is None:
        if scoped:
            return "profile"
    elif t["id"] in profile.get("disable", []) or (scoped and t["id"] not in profile.get("enable", [])):
        return "profile"
    if t["requiresConnection"] and not granted(bundle, t, roles, subject, at, allowed_ids):
        return "no_connection"
    return None


def granted(bundle, t, roles, subject, at, allowed_ids):
    """R6.13: the connection ids granted to this subject for this tool at this instant."""
    out = []
    for g in bundle.grants:
        if not (subject in g["subjects"] or any(r in g["subjects"] for r in roles)):
            continue
        if t["id"] not in g["matched"]:
            continue
        if "expiresAt" in g and not at < _instant_ms(g["expiresAt"]):
            continue
        if allowed_ids is not None and g["connectionId"] not in allowed_ids:
            continue
        out.append(g["connectionId"])
    return out


def decide(bundle, request, view, call):
    """§7 (without approval receipts)."""
    call_id = call.get("toolCallId") if isinstance(call.get("toolCallId"), str) and call.get("toolCallId") else str(uuid.uuid4())

    def deny(code, errors=None):
        out = {"toolCallId": call_id, "decision": "deny", "errorCode": code}
        if errors is not None:
            out["errors"] = errors
        return out

    t = bundle.by_id.get(call.get("name"))
    if t is None:
        return deny("unavailable")
    visible = {e["id"]: e for e in view["tools"]}
    if t["id"] not in visible:
        return deny("policy_denied")
    roles = view["roles"]
    if "connectionId" in call or t["requiresConnection"]:
        cid = call.get("connectionId")
        if not isinstance(cid, str) or cid == "":
            return deny("validation")
        at = _instant_ms(request["at"]) if "at" in request else int(datetime.now(timezone.utc).timestamp() * 1000)
        if cid not in granted(bundle, t, roles, request["subject"], at, request.get("allowedConnectionIds")):
            return deny("policy_denied")
    text = call.get("arguments")
    if text is None:
        status, args = "ok", {}
    elif not isinstance(text, str):
        # Arguments handed over as a value rather than text: a JSON value only (R7.5, R14.6, R14.3).
        status = dialect.value_status(text)
        args = text if status == "ok" else None
    else:
        status, args = dialect.parse_arguments(text)
    if status == "invalid_json":
        return deny("invalid_json")
    if status == "too_deep":
        return deny("validation", [""])
    validator = bundle.validator(t["inputSchema"])
    if validator is None:
        return deny("validation", [""])
    pointers = dialect.normative_pointers(validator, args)
    if pointers:
        return deny("validation", sorted(pointers))
    members = connection_members(text) if isinstance(text, str) else connection_members_of(args)
    if members:
        return deny("validation", members)
    failing = {"deny": None, "require_approval": None}
    for r in roles:
        for i, c in enumerate(bundle.roles[r]["constraints"]):
            if not any(glob_matches(g, t["id"]) for g in c["tools"]):
                continue
            v = bundle.validator(c["arguments"])
            met = v is not None and not dialect.normative_pointers(v, args)
            if not met and failing[c["otherwise"]] is None:
                failing[c["otherwise"]] = {"role": r, "index": i, "otherwise": c["otherwise"], "reason": c["reason"]}
    if failing["deny"]:
        return dict(deny("policy_denied"), constraint=failing["deny"])
    if failing["require_approval"]:
        return {"toolCallId": call_id, "decision": "require_approval", "constraint": failing["require_approval"]}
    return {"toolCallId": call_id, "decision": visible[t["id"]]["decision"]}


def connection_members(text):
    """R7.10: pointers of `connectionId` members in document order, cut at a name that is no field."""
    value = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    out = []

    def walk(node, tokens, exact):
        if isinstance(node, list) and not (node and isinstance(node[0], tuple)):
            for i, child in enumerate(node):
                walk(child, tokens + [i] if exact else tokens, exact)
        elif isinstance(node, list):
            for name, child in node:
                here_exact = exact and bool(FIELD_NAME.match(name))
                here = tokens + [name] if here_exact else tokens
                if name == "connectionId":
                    pointer = "".join("/%s" % t for t in here)
                    if pointer not in out:
                        out.append(pointer)
                walk(child, here, here_exact)

    walk(value, [], True)
    return out


def connection_members_of(value):
    """R7.10 for arguments handed over as a JSON value: in its own member order."""
    return connection_members(json.dumps(value))


def redact(bundle, tool_id, output):
    """§10."""
    t = bundle.by_id.get(tool_id)
    if t is None or "excluded" in t:
        return None
    paths = []
    for path in t["redaction"]["allow"]:
        if path == "$":
            return output
        segments = [s for s in re.split(r"\.|(?=\[\])", path) if s != ""]
        if segments and segments[0] == "$":
            segments = segments[1:]
        paths.append(segments)
    return _keep(paths, output)


_ABSENT = object()


def _keep(paths, value):
    if any(len(p) == 0 for p in paths):
        return value
    if isinstance(value, list):
        rest = [p[1:] for p in paths if p[0] == "[]"]
        if not rest:
            return _ABSENT
        kept = [_keep(rest, v) for v in value]
        return [k for k in kept if k is not _ABSENT]
    if not isinstance(value, dict):
        return _ABSENT
    out = {}
    for name, child in value.items():
        rest = [p[1:] for p in paths if p[0] == name or p[0] == "*"]
        if not rest:
            continue
        kept = _keep(rest, child)
        if kept is not _ABSENT:
            out[name] = kept
    return out


def redact_answer(bundle, tool_id, output):
    kept = redact(bundle, tool_id, output)
    return None if kept is _ABSENT else kept


# --- §12 conformance vectors ---------------------------------------------------------------------


def _in_order(ids, listed):
    positions = [listed.index(i) if i in listed else -1 for i in ids]
    return all(p >= 0 for p in positions) and positions == sorted(positions)


CONFORMANCE_AT = "2000-01-01T00:00:00.000Z"


def check_vector(bundle, vector):
    """None when the vector reproduces, else what differs."""
    # R12.4: a vector's request that names no instant is evaluated at the fixed conformance instant.
    request = dict(vector["request"])
    request.setdefault("at", CONFORMANCE_AT)
    answer = evaluate(bundle, request)
    if "call" in vector:
        got = decide(bundle, request, answer, vector["call"])
        want = vector["expect"]
        if "toolCallId" in vector["call"] and got["toolCallId"] != vector["call"]["toolCallId"]:
            return "toolCallId"
        if got["decision"] != want["decision"] or got.get("errorCode") != want.get("errorCode"):
            return "decided %s/%s, expected %s/%s" % (got["decision"], got.get("errorCode"), want["decision"], want.get("errorCode"))
        for p in want.get("pointers", []):
            if p not in got.get("errors", []):
                return "pointer %s missing from %s" % (p, got.get("errors"))
        return None
    e = vector["expect"]
    tools = [t["id"] for t in answer["tools"]]
    filtered = {f["id"]: f["reason"] for f in answer["filtered"]}
    checks = [
        ("roles", lambda: answer["roles"] == e["roles"]),
        ("groups", lambda: answer["groups"] == e["groups"]),
        ("state", lambda: answer["state"] == e["state"]),
        ("rejectedGroups", lambda: answer.get("rejected", {}).get("groups") == e["rejectedGroups"]),
        ("rejected", lambda: ("rejected" in answer) == e["rejected"]),
        ("visibleCount", lambda: len(tools) == e["visibleCount"]),
        ("visible", lambda: _in_order(e["visible"], tools)),
        ("filteredOrder", lambda: _in_order(e["filteredOrder"], [f["id"] for f in answer["filtered"]])),
        ("hidden", lambda: all(filtered.get(i) == r for i, r in e["hidden"].items())),
        ("decisions", lambda: all(any(t["id"] == i and t["decision"] == d for t in answer["tools"]) for i, d in e["decisions"].items())),
        # R6.16: exactly these constraints, in order; [] means visible with no constraints member.
        ("constraints", lambda: all(_reports(answer, i, cs) for i, cs in e["constraints"].items())),
    ]
    for key, ok in checks:
        if key in e and not ok():
            return "%s differs" % key
    return None


def _reports(answer, tool_id, constraints):
    entry = next((t for t in answer["tools"] if t["id"] == tool_id), None)
    if entry is None:
        return False
    return entry["constraints"] == constraints if constraints else "constraints" not in entry


# --- §9 planBatch ---------------------------------------------------------------------------------


def _js_number(x):
    """A number as RFC 8785 (ECMAScript's Number::toString) writes it."""
    if isinstance(x, bool):
        raise TypeError("not a number")
    if isinstance(x, int) or (x.is_integer() and abs(x) < 2**53):
        return str(int(x))
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = ("%r" % abs(x)).partition("e")
    digits = mantissa.replace(".", "")
    point = mantissa.index(".") if "." in mantissa else len(mantissa)
    n = point + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))


def canonical_json(value):
    """RFC 8785: members sorted by UTF-16 code units, ECMAScript numbers, minimal escapes."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return _js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(value[k]) for k in sorted(value, key=_utf16)) + "}"


def derived_call_id(index, name, arguments):
    """R9.3: the arguments as given (text, a JSON value, or null when absent)."""
    h = hashlib.sha256(canonical_json({"index": index, "name": name, "arguments": arguments}).encode()).hexdigest()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


def plan_batch(bundle, request, view, calls):
    """§9."""
    rejected, groups = [], []
    open_group, open_keys = None, set()
    for i, call in enumerate(calls):
        call_id = call.get("toolCallId") or derived_call_id(i, call.get("name"), call.get("arguments"))
        d = decide(bundle, request, view, dict(call, toolCallId=call_id))
        if d["decision"] == "deny":
            rejected.append(d)
            continue
        planned = {"toolCallId": call_id, "name": call["name"], "decision": d["decision"]}
        parallel = bundle.by_id[call["name"]].get("parallel") or {}
        if not parallel.get("safe"):
            open_group = None
            groups.append({"parallel": False, "calls": [planned]})
            continue
        key = parallel.get("resourceKey")
        if open_group is None or (key is not None and key in open_keys):
            open_group, open_keys = {"parallel": True, "calls": []}, set()
            groups.append(open_group)
        open_group["calls"].append(planned)
        if key is not None:
            open_keys.add(key)
    return {"rejected": rejected, "groups": groups}
