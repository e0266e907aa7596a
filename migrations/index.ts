import type { Migration } from 'kysely';
import * as m001 from './001-initial.ts';
import * as m002 from './002-runtime-detail.ts';
import * as m003 from './003-policy-tests.ts';

/** Every migration, by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  '001-initial': m001,
  '002-runtime-detail': m002,
  '003-policy-tests': m003,
};
