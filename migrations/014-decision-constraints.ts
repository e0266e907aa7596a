import type { Kysely } from 'kysely';

// Decision records keep the argument constraint that decided a call (denied it, or asked for
// approval): the role holding it, its position in the role's `constraints`, what it does when
// arguments fail it, and its reason. One plain column each (never JSON), so the same migration
// runs on SQLite and PostgreSQL and a reader can filter or group by them. Never the arguments.

const COLUMNS = [
  ['constraint_role', 'text'],
  ['constraint_index', 'integer'],
  ['constraint_otherwise', 'text'],
  ['constraint_reason', 'text'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, type] of COLUMNS) await db.schema.alterTable('decisions').addColumn(name, type).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of [...COLUMNS].reverse()) await db.schema.alterTable('decisions').dropColumn(name).execute();
}
