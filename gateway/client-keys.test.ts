import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClientKeys, FailureLimiter } from './client-keys.ts';

const client = (name: string, key: string) => ({
  name,
  subject: `agent:${name}`,
  keyDigest: createHash('sha256').update(key).digest(),
  request: { subject: `agent:${name}` },
  initialState: 'undefined',
});

describe('client keys', () => {
  it('finds the client of a bearer key and nobody for a wrong, missing or malformed one', () => {
    const keys = new ClientKeys([client('a', 'key-a-0123456789abcdef'), client('b', 'key-b-0123456789abcdef')]);
    expect(keys.authenticate('Bearer key-b-0123456789abcdef')?.name).toBe('b');
    expect(keys.authenticate('bearer key-a-0123456789abcdef')?.name).toBe('a');
    expect(keys.authenticate('Bearer key-a-0123456789abcdeX')).toBeNull();
    expect(keys.authenticate('Basic key-a-0123456789abcdef')).toBeNull();
    expect(keys.authenticate(undefined)).toBeNull();
  });
});

describe('client keys on a kept-alive connection', () => {
  it('answers each request by the header it carries, whatever the connection authenticated before', () => {
    const keys = new ClientKeys([client('a', 'key-a-0123456789abcdef'), client('b', 'key-b-0123456789abcdef')]);
    const connection = {};
    expect(keys.authenticateOn(connection, 'Bearer key-a-0123456789abcdef')?.name).toBe('a');
    expect(keys.authenticateOn(connection, 'Bearer key-a-0123456789abcdef')?.name).toBe('a');
    // Another key on the same connection is its own client; a wrong or missing one is nobody.
    expect(keys.authenticateOn(connection, 'Bearer key-b-0123456789abcdef')?.name).toBe('b');
    expect(keys.authenticateOn(connection, 'Bearer key-b-0123456789abcdeX')).toBeNull();
    expect(keys.authenticateOn(connection, 'Bearer key-a-0123456789abcdeX')).toBeNull();
    expect(keys.authenticateOn(connection, undefined)).toBeNull();
    // Same length, one character off, right after the remembered one.
    expect(keys.authenticateOn(connection, 'Bearer key-a-0123456789abcdef')?.name).toBe('a');
    expect(keys.authenticateOn(connection, 'Bearer key-a-0123456789abcdeg')).toBeNull();
    // What one connection authenticated says nothing for another.
    expect(keys.authenticateOn({}, 'Bearer key-a-0123456789abcdeg')).toBeNull();
    expect(keys.authenticateOn({}, 'Bearer key-b-0123456789abcdef')?.name).toBe('b');
  });
});

describe('the failure limiter', () => {
  it('refuses an address after its allowance of failures and lets it try again as the allowance refills', () => {
    let t = 0;
    const limiter = new FailureLimiter(10, () => t);
    for (let i = 0; i < 10; i++) {
      expect(limiter.blockedFor('10.0.0.1')).toBe(0);
      limiter.fail('10.0.0.1');
    }
    expect(limiter.blockedFor('10.0.0.1')).toBeGreaterThan(0);
    expect(limiter.blockedFor('10.0.0.2')).toBe(0);
    t += 6_000;
    expect(limiter.blockedFor('10.0.0.1')).toBe(0);
  });
});
