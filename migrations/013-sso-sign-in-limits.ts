import type { Kysely } from 'kysely';

// Single sign-on limits that must hold across replicas, so they live in the database:
// - each pending sign-in remembers the client address (group) that started it, so one address
//   can hold only a few of them and never fill the store for everyone else;
// - a refused sign-in is audited at most once per subject per minute: the subject's last audited
//   refusal is kept here (by hash of the subject) and claimed with one conditional upsert.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sso_logins').addColumn('client_address', 'text').execute();
  await db.schema.createIndex('sso_logins_client_address').on('sso_logins').column('client_address').execute();
  await db.schema
    .createTable('sso_refusals')
    .addColumn('subject_hash', 'text', (c) => c.primaryKey())
    .addColumn('audited_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sso_refusals').execute();
  await db.schema.dropIndex('sso_logins_client_address').execute();
  await db.schema.alterTable('sso_logins').dropColumn('client_address').execute();
}
