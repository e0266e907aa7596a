import pg from 'pg';

// The advisory-lock key held while the shared keys directory changes ("tgkeydir" in ASCII).
export const KEYS_LOCK_KEY = 0x74676b6579646972n;

/**
 * A lock across every process on one PostgreSQL database: `fn` runs while this process holds the
 * session-level advisory lock `key` on a connection of its own, released when `fn` settles (or
 * when the process dies and its connection with it).
 */
export function advisoryLock(url: string, key: bigint) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url, application_name: 'toolgate-lock' });
    // A failure after connecting shows in the query that meets it; the event alone must not crash the process.
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1::bigint)', [String(key)]);
      return await fn();
    } finally {
      // Closing the session releases the lock whether or not an unlock would have reached it.
      await client.end().catch(() => undefined);
    }
  };
}
