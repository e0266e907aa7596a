"""JSON lines on stdin and stdout: one request, one answer, for tests that drive this reference.

Requests: {"op": "load", "id": k, "bundle": {...}} keeps a bundle under k;
{"op": "vectors", "id": k} answers the failing vectors; {"op": "evaluate", "id": k, "request"};
{"op": "decide", "id": k, "request", "call"}; {"op": "plan", "id": k, "request", "calls"}; {"op": "redact", "id": k, "tool", "output"}.
Every answer is {"ok": true, "value": ...} or {"ok": false, "error": "..."}.
"""

import json
import sys
import traceback

from . import runtime


def main():
    bundles = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req["op"]
            if op == "load":
                bundles[req["id"]] = runtime.Bundle(req["bundle"])
                value = True
            else:
                b = bundles[req["id"]]
                if op == "vectors":
                    value = [{"index": i, "problem": p} for i, v in enumerate(req.get("vectors") or []) for p in [runtime.check_vector(b, v)] if p]
                elif op == "evaluate":
                    value = runtime.evaluate(b, req["request"])
                elif op == "decide":
                    view = runtime.evaluate(b, req["request"])
                    value = runtime.decide(b, req["request"], view, req["call"])
                elif op == "plan":
                    view = runtime.evaluate(b, req["request"])
                    value = runtime.plan_batch(b, req["request"], view, req["calls"])
                elif op == "redact":
                    value = runtime.redact_answer(b, req["tool"], req["output"])
                else:
                    raise ValueError("unknown op %s" % op)
            out = {"ok": True, "value": value}
        except Exception as e:  # an answer per line, whatever happens
            out = {"ok": False, "error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc(limit=-4)}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
