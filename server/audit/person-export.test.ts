import { afterEach, describe, expect, it } from 'vitest';
import { ToolgateDatabase } from '../db/database.ts';
import { ChainVerifier, eventHash } from './chain.ts';
import { appendAuditEvent, listAuditEvents } from './events.ts';
import { CSV_HEADER, fromCsvRecord, parseCsv, toCsvRow, toJsonl } from './export.ts';

let d: ToolgateDatabase | null = null;
afterEach(async () => {
  await d?.close();
  d = null;
});

describe('people in the audit chain', () => {
  it('hash the person beside a user: actor, leave token events as before, and verify again from CSV and JSONL exports', async () => {
    d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    const person = { email: 'ada@example.com', name: 'Ada, "the first" Lovelace' };
    await d.change(async (tx) => {
      await appendAuditEvent(tx, { actor: 'token:abc', action: 'create', entityType: 'group', entityId: 'g' });
      await appendAuditEvent(tx, { actor: 'user:ada-1815', person, action: 'update', entityType: 'group', entityId: 'g', before: { a: 1 }, after: { a: 2 } });
      await appendAuditEvent(tx, { actor: 'user:no-email', person: { email: null, name: null }, action: 'delete', entityType: 'group', entityId: 'g' });
    });
    const events = await listAuditEvents(d.db, {}, 0, 10);
    expect(Object.keys(events[0])).not.toContain('actorEmail');
    expect(events[1]).toMatchObject({ actor: 'user:ada-1815', actorEmail: person.email, actorName: person.name });
    expect(events[2]).toMatchObject({ actorEmail: null, actorName: null });

    // The person is part of what is hashed: changing the name breaks the link.
    expect(eventHash({ ...events[1], actorName: 'Someone Else' })).not.toBe(events[1].hash);

    const csv = CSV_HEADER + events.map(toCsvRow).join('');
    const records = [...parseCsv(csv)].slice(1).map(fromCsvRecord);
    expect(records).toEqual(events);
    const fromCsv = new ChainVerifier();
    for (const e of records) fromCsv.push(e);
    expect(fromCsv.result().ok).toBe(true);

    const fromJsonl = new ChainVerifier();
    for (const line of events.map(toJsonl)) fromJsonl.push(JSON.parse(line));
    expect(fromJsonl.result()).toMatchObject({ ok: true, count: 3 });
  });

  it('find a person by user id or by email', async () => {
    d = new ToolgateDatabase(':memory:');
    await d.migrateToLatest();
    await d.change(async (tx) => {
      await appendAuditEvent(tx, {
        actor: 'user:ada-1815',
        person: { email: 'ada@example.com', name: 'Ada' },
        action: 'update',
        entityType: 'group',
        entityId: 'g',
      });
      await appendAuditEvent(tx, { actor: 'token:abc', action: 'update', entityType: 'group', entityId: 'g' });
    });
    expect((await listAuditEvents(d.db, { actor: 'user:ada-1815' }, 0, 10)).map((e) => e.seq)).toEqual([1]);
    expect((await listAuditEvents(d.db, { actor: 'ada@example.com' }, 0, 10)).map((e) => e.seq)).toEqual([1]);
    expect(await listAuditEvents(d.db, { actor: 'bob@example.com' }, 0, 10)).toEqual([]);
  });
});
