// The server's timestamps read as docs/spec.md R14.5 reads `date-time`: what the server accepts
// (a grant's expiry, a bundle's instants) every runtime can read.
import { describe, expect, it } from 'vitest';
import { validate } from './index.ts';

const grant = (expiresAt: string) => ({ connectionId: 'conn-1', subjects: ['agent:a'], tools: ['core__*'], expiresAt });

describe('date-time in the server’s own schemas', () => {
  it.each(['2027-01-01T00:00:00Z', '2027-01-01T00:00:00.123+02:00'])('accepts %s', (at) => {
    expect(validate('connection-grant', grant(at)).ok).toBe(true);
  });

  it.each(['2027-01-01 00:00:00Z', '2027-02-29T00:00:00Z', '2027-01-01T23:59:60Z', '2027-01-01T00:00:00'])('refuses %s at its pointer', (at) => {
    const r = validate('connection-grant', grant(at));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.pointer)).toContain('/expiresAt');
  });
});
