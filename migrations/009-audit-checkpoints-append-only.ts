import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Checkpoints are append-only like the events they sign. A signature cannot be forged without the
// key, but a row could be deleted or replaced by an older one to hide that a later head existed;
// the database refuses both, whatever the application does.

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`CREATE FUNCTION audit_checkpoints_refuse() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'audit_checkpoints is append-only'; END; $$ LANGUAGE plpgsql`.execute(db);
    await sql`CREATE TRIGGER audit_checkpoints_no_change BEFORE UPDATE OR DELETE ON audit_checkpoints
      FOR EACH ROW EXECUTE FUNCTION audit_checkpoints_refuse()`.execute(db);
  } else {
    await sql`CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
      BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only'); END`.execute(db);
    await sql`CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
      BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only'); END`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`DROP TRIGGER audit_checkpoints_no_change ON audit_checkpoints`.execute(db);
    await sql`DROP FUNCTION audit_checkpoints_refuse()`.execute(db);
  } else {
    await sql`DROP TRIGGER audit_checkpoints_no_update`.execute(db);
    await sql`DROP TRIGGER audit_checkpoints_no_delete`.execute(db);
  }
}
