import type { ToolgateDatabase } from './database.ts';

/**
 * A getter for one value per open database, made on first use and dropped with the database: a
 * server's caches live exactly as long as its database, and test servers never share one.
 */
export function perDatabase<T, Rest extends unknown[] = []>(
  make: (database: ToolgateDatabase, ...rest: Rest) => T,
): (database: ToolgateDatabase, ...rest: Rest) => T {
  const values = new WeakMap<ToolgateDatabase, T>();
  return (database, ...rest) => {
    let value = values.get(database);
    if (value === undefined) {
      // Anything else `make` needs (a server's settings) comes with the first call; later calls get that value.
      value = make(database, ...rest);
      values.set(database, value);
    }
    return value;
  };
}
