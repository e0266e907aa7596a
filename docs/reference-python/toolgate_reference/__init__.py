"""A second implementation of docs/spec.md (the Toolgate runtime), written from the spec alone.

It reads signed bundles' content (formats toolgate.bundle/v2 and v1), evaluates requests (§6),
decides calls (§7), redacts outputs (§10) and checks a bundle's own conformance vectors (§12).
Python's standard library, Debian's python3-jsonschema for the JSON Schema keywords, and
re2_patterns.py for the pattern dialect of R14.4.
"""
