#!/usr/bin/env python3
"""Verifies a Toolgate key set against a root key, then a bundle against that key set, with PyJWT
only: an independent check, outside TypeScript, of what README's "Using a bundle from another
language" describes.

usage: verify-with-pyjwt.py ROOT_JWKS KEYSET_JSON KEYSET_JWS BUNDLE_JSON BUNDLE_JWS TENANT
Prints "ok: ..." and exits 0, or prints "refused: <reason code>: <why>" and exits 1.
"""
import base64
import hashlib
import json
import sys
from datetime import datetime, timezone

import jwt  # PyJWT (Debian python3-jwt); EdDSA needs python3-cryptography

ENVELOPE = ("version", "revision", "previousRevision", "issuedAt", "expiresAt")


class Refused(Exception):
    def __init__(self, code, why):
        super().__init__(f"{code}: {why}")


def canonical(doc):
    # RFC 8785 for what bundles and key sets hold (strings, integers, booleans, null, ASCII keys).
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verify_detached(signature, payload, keys, typ, code_prefix):
    """A detached JWS (<protected>..<signature>): re-attach the payload (RFC 7515 appendix F), verify."""
    parts = signature.strip().split(".")
    if len(parts) != 3 or parts[1] != "":
        raise Refused(code_prefix + "malformed", "not a detached compact JWS")
    header = jwt.get_unverified_header(parts[0] + "." + b64url(payload) + "." + parts[2])
    if header.get("alg") != "EdDSA" or header.get("typ") != typ or "crit" in header or "b64" in header:
        raise Refused(code_prefix + "malformed", f"unexpected protected header {header}")
    kid = header.get("kid")
    jwk = keys.get(kid)
    if jwk is None:
        return kid, None
    key = jwt.PyJWK({"kty": "OKP", "crv": "Ed25519", "x": jwk["x"]}, algorithm="EdDSA").key
    try:
        verified = jwt.api_jws.decode_complete(parts[0] + "." + b64url(payload) + "." + parts[2], key=key, algorithms=["EdDSA"])
    except jwt.exceptions.InvalidSignatureError:
        raise Refused(code_prefix + "bad_signature", f"does not verify under {kid}")
    if verified["payload"] != payload:
        raise Refused(code_prefix + "malformed", "payload mismatch")
    return kid, jwk


def not_expired(doc, code):
    expires = datetime.fromisoformat(doc["expiresAt"].replace("Z", "+00:00"))
    if expires <= datetime.now(timezone.utc):
        raise Refused(code, f"expired at {doc['expiresAt']}")


def main(root_file, keyset_file, keyset_sig_file, bundle_file, bundle_sig_file, tenant):
    roots_doc = json.load(open(root_file))
    roots = {r["kid"]: r for r in roots_doc.get("keys", roots_doc.get("roots", []))}
    keyset_bytes = open(keyset_file, "rb").read()
    keyset_sig = open(keyset_sig_file).read()

    # 1. The key set: signed by a trusted root, canonical, the right format, not expired.
    kid, root = verify_detached(keyset_sig, keyset_bytes, roots, "toolgate-keyset+jws", "keyset_")
    if root is None:
        raise Refused("keyset_untrusted_root", f"signed by {kid}, not a trusted root")
    keyset = json.loads(keyset_bytes)
    if keyset.get("format") != "toolgate.keyset/v1" or canonical(keyset) != keyset_bytes:
        raise Refused("keyset_malformed", "not a canonical toolgate.keyset/v1 document")
    not_expired(keyset, "keyset_expired")

    # 2. The bundle: signed by a key the key set lists as next or active.
    bundle_bytes = open(bundle_file, "rb").read()
    signing = {k["kid"]: k for k in keyset["keys"]}
    kid, key = verify_detached(open(bundle_sig_file).read(), bundle_bytes, signing, "toolgate-bundle+jws", "")
    if key is None:
        raise Refused("unknown_kid", f"the key set lists no key {kid}")
    if key["status"] == "retired":
        raise Refused("retired_key", f"{kid} is retired")
    bundle = json.loads(bundle_bytes)
    # Runtimes read v2 and, for one release, v1 (DESIGN "Bundle").
    if bundle.get("format") not in ("toolgate.bundle/v2", "toolgate.bundle/v1") or canonical(bundle) != bundle_bytes:
        raise Refused("malformed", "not a canonical toolgate.bundle/v2 (or v1) document")
    if bundle["tenant"] != tenant:
        raise Refused("tenant_mismatch", f"for tenant {bundle['tenant']}")
    not_expired(bundle, "expired")
    content = {k: v for k, v in bundle.items() if k not in ENVELOPE}
    revision = "sha256:" + hashlib.sha256(canonical(content)).hexdigest()
    if revision != bundle["revision"]:
        raise Refused("revision_mismatch", f"content hashes to {revision}")

    print(f"ok: key set v{keyset['version']} signed by root {list(roots)[0] if len(roots) == 1 else 'a trusted root'}; "
          f"bundle {bundle['tenant']} v{bundle['version']} {bundle['revision']} signed by {kid} ({key['status']})")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        main(*sys.argv[1:])
    except Refused as r:
        print(f"refused: {r}")
        sys.exit(1)
