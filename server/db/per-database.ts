import type { ToolgateDatabase } from './database.ts';

/**
 * A getter for one value per open database, made on first use and dropped with the database: a
 * server's caches live exactly as long as its database, and test servers never share one.
 */
export function perDatabase<T>(make: (database: ToolgateDatabase) => T): (database: ToolgateDatabase) => T {
  const values = new WeakMap<ToolgateDatabase, T>();
  return (database) => {
    let value = values.get(database);
    if (value === undefined) {
      value = make(database);
      values.set(database, value);
    }
    return value;
  };
}
