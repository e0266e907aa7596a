import type { Kysely } from 'kysely';

// Approval requests: a runtime asks a person to approve one exact call. The arguments column is
// emptied once the request is decided or expires (the digest stays, and the receipt binds to it).
// Decision records gain the approval that let a call through (its id and who gave it), never
// the arguments.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('approval_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('arguments_digest', 'text', (c) => c.notNull())
    // Canonical JSON of the arguments while pending; null once decided or expired.
    .addColumn('arguments', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('bundle_version', 'integer')
    .addColumn('tool_call_id', 'text')
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('decision_reason', 'text')
    // RFC 8785 JSON of the receipt payload and its detached JWS, once approved.
    .addColumn('receipt_payload', 'text')
    .addColumn('receipt_signature', 'text')
    .execute();
  await db.schema.createIndex('approval_requests_tenant_time').on('approval_requests').columns(['tenant', 'requested_at', 'id']).execute();
  await db.schema.createIndex('approval_requests_pending').on('approval_requests').columns(['state', 'expires_at']).execute();
  await db.schema.createIndex('approval_requests_requester').on('approval_requests').columns(['requested_by', 'state']).execute();

  await db.schema.alterTable('decisions').addColumn('approval_id', 'text').execute();
  await db.schema.alterTable('decisions').addColumn('approval_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('decisions').dropColumn('approval_by').execute();
  await db.schema.alterTable('decisions').dropColumn('approval_id').execute();
  await db.schema.dropTable('approval_requests').execute();
}
