import { type Context, Hono } from 'hono';
import type { AuditEvent } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { authorize } from '../auth/guard.ts';
import type { Resource } from '../auth/permissions.ts';
import type { AppEnv } from '../context.ts';
import type { DbOrTx, Tx } from '../db/database.ts';
import { ApiError, type ErrorCode, type ProblemDetail } from '../errors.ts';
import { dropReadOnly, readJson, takeReason, validOrThrow } from '../http/body.ts';
import { mergePatch } from '../http/merge-patch.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import { type DocumentRepository, type Stored, stripStored } from '../store/document-store.ts';
import { requireTenantExists } from '../store/tenants.ts';

export type DocumentRoutesOptions<T extends object> = {
  /** Schema kind of the body, e.g. `group`. */
  kind: string;
  entityType: AuditEvent['entityType'];
  resource: Resource;
  store: DocumentRepository<T>;
  /**
   * The entity lives in a tenant named by the mount path's `:tenant` (grants): access is checked
   * for that tenant, a missing tenant is a 404, a body's `tenant` must name it, and audit events
   * carry it.
   */
  tenantScoped?: boolean;
  /** Whether PATCH (JSON merge patch) is offered; default true. */
  patch?: boolean;
  /** Problems in the raw body found before schema validation (e.g. credentials), answered 400. */
  screen?: (body: unknown) => ProblemDetail[];
  /** Read-only fields beyond version/timestamps that a body may carry and the server ignores. */
  readOnly?: string[];
  /**
   * Names a create whose body leaves out the key field (inside the write transaction, so the
   * name can avoid existing ones); without it the key is required.
   */
  nameWhenAbsent?: (tx: Tx, body: Record<string, unknown>) => Promise<string>;
  /** Server-derived fields, set after validation (keeps the existing entity's where relevant). */
  normalize?: (doc: T, existing: Stored<T> | undefined, tx: Tx) => T | Promise<T>;
  /** Referential checks inside the write transaction. */
  check: (tx: Tx, doc: T, existing: Stored<T> | undefined, c: Context<AppEnv>) => Promise<ProblemDetail[]>;
  checkDelete?: (tx: Tx, key: string, existing: Stored<T>) => Promise<ProblemDetail[]>;
  /** List filters, validated against `<queryKind>` first. */
  filter?: { queryKind: string; apply: (items: Stored<T>[], query: Record<string, string>) => Stored<T>[] };
};

/** Throws a 400 for problems found by a check, with the most specific code they share. */
export function throwProblems(problems: ProblemDetail[], status = 400): void {
  if (problems.length === 0) return;
  const codes = new Set(problems.map((p) => p.code));
  const code: ErrorCode =
    status === 409
      ? 'conflict'
      : codes.has('secret_field')
        ? 'secret_field'
        : codes.size === 1 && codes.has('cycle')
          ? 'cycle'
          : [...codes].every((c) => c === 'unknown_reference')
            ? 'unknown_reference'
            : 'validation';
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  throw new ApiError(status, code, `${first.pointer || 'the body'}: ${first.message}${more}`, { errors: problems });
}

/**
 * CRUD routes for a document entity: list, create (409 on a duplicate), read with ETag,
 * replace and merge-patch with If-Match, delete with If-Match. Every change is audited.
 */
export function documentRoutes<T extends object>(o: DocumentRoutesOptions<T>): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  // The document as written, without what the store adds (and the tenant a scoped one is kept under).
  const documentOf = (s: Stored<T>): T => {
    const doc = stripStored(s) as T & { tenant?: string };
    if (o.tenantScoped) delete doc.tenant;
    return doc;
  };
  const keyField = o.store.key;
  const keyOf = (doc: T) => (doc as Record<string, string>)[keyField];
  const tenantOf = (c: Context<AppEnv>): string | undefined => (o.tenantScoped ? c.req.param('tenant') : undefined);
  const named = (key: string, tenant: string | undefined) => `${o.entityType} ${key}${tenant === undefined ? '' : ` in tenant ${tenant}`}`;

  const parse = (body: unknown, tenant: string | undefined, key?: string): T => {
    if (o.screen) throwProblems(o.screen(body));
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const fields = body as Record<string, unknown>;
      dropReadOnly(fields, o.readOnly);
      if (tenant !== undefined) {
        if (fields.tenant !== undefined && fields.tenant !== tenant) {
          throw new ApiError(400, 'validation', `The body names tenant ${String(fields.tenant)} but the URL names ${tenant}`, {
            errors: [{ pointer: '/tenant', message: `must be ${tenant}` }],
          });
        }
        delete fields.tenant;
      }
    }
    const doc = validOrThrow<T>(o.kind, body);
    if (key !== undefined && keyOf(doc) !== key) {
      throw new ApiError(400, 'validation', `The body names ${keyOf(doc)} but the URL names ${key}; renaming is not supported`, {
        errors: [{ pointer: `/${keyField}`, message: `must be ${key}` }],
      });
    }
    return doc;
  };

  /** The stored document; a 404 for a missing tenant (of a tenant-scoped entity) or document. */
  const requireExisting = async (tx: DbOrTx, key: string, tenant: string | undefined) => {
    if (tenant !== undefined) await requireTenantExists(tx, tenant);
    const existing = await o.store.get(tx, key, tenant);
    if (!existing) throw new ApiError(404, 'not_found', `${named(key, tenant)} does not exist`);
    return existing;
  };

  r.get('/', async (c) => {
    const tenant = tenantOf(c);
    authorize(c, o.resource, 'read', tenant);
    const query = o.filter ? validOrThrow<Record<string, string>>(o.filter.queryKind, { ...c.req.query() }) : {};
    const db = c.get('deps').database.db;
    if (tenant !== undefined) await requireTenantExists(db, tenant);
    let items = await o.store.list(db, tenant);
    if (o.filter) items = o.filter.apply(items, query);
    return c.json({ items });
  });

  r.post('/', async (c) => {
    const tenant = tenantOf(c);
    authorize(c, o.resource, 'write', tenant);
    const body = await readJson(c);
    const reason = takeReason(c, body as Record<string, unknown>);
    const created = await withChange(c, reason, async (ch) => {
      if (o.nameWhenAbsent && body !== null && typeof body === 'object' && !Array.isArray(body)) {
        const fields = body as Record<string, unknown>;
        if (fields[keyField] === undefined) fields[keyField] = await o.nameWhenAbsent(ch.tx, fields);
      }
      let doc = parse(body, tenant);
      const key = keyOf(doc);
      if (tenant !== undefined) await requireTenantExists(ch.tx, tenant);
      if (await o.store.get(ch.tx, key, tenant))
        throw new ApiError(409, 'conflict', `${named(key, tenant)} already exists`, { errors: [{ pointer: `/${keyField}`, message: 'already exists' }] });
      if (o.normalize) doc = await o.normalize(doc, undefined, ch.tx);
      throwProblems(await o.check(ch.tx, doc, undefined, c));
      const stored = await o.store.insert(ch.tx, key, doc, new Date().toISOString(), tenant);
      await ch.record({ action: 'create', entityType: o.entityType, entityId: key, ...(tenant === undefined ? {} : { tenant }), before: null, after: doc });
      return stored;
    });
    c.header('ETag', etagOf(created.version));
    c.header('Location', `${c.req.path.replace(/\/$/, '')}/${encodeURIComponent(keyOf(created))}`);
    return c.json(created, 201);
  });

  r.get('/:key', async (c) => {
    const tenant = tenantOf(c);
    authorize(c, o.resource, 'read', tenant);
    const existing = await requireExisting(c.get('deps').database.db, c.req.param('key'), tenant);
    c.header('ETag', etagOf(existing.version));
    return c.json(existing);
  });

  const replace = (mode: 'put' | 'patch') => async (c: Context<AppEnv>) => {
    const tenant = tenantOf(c);
    authorize(c, o.resource, 'write', tenant);
    const key = c.req.param('key') as string;
    const expected = requiredIfMatch(c);
    const body = await readJson(c);
    const reason = takeReason(c, body as Record<string, unknown>);
    if (mode === 'patch' && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw new ApiError(400, 'validation', 'A merge patch must be a JSON object', { errors: [{ pointer: '', message: 'must be an object' }] });
    }
    const updated = await withChange(c, reason, async (ch) => {
      const existing = await requireExisting(ch.tx, key, tenant);
      checkVersion(expected, existing);
      const before = documentOf(existing);
      let doc = parse(mode === 'put' ? body : mergePatch(before, body), tenant, key);
      if (o.normalize) doc = await o.normalize(doc, existing, ch.tx);
      throwProblems(await o.check(ch.tx, doc, existing, c));
      const stored = await o.store.update(ch.tx, key, doc, existing.version, existing.createdAt, new Date().toISOString(), tenant);
      if (!stored) throw changedMeanwhile(`${o.entityType} ${key}`, await o.store.get(ch.tx, key, tenant));
      await ch.record({ action: 'update', entityType: o.entityType, entityId: key, ...(tenant === undefined ? {} : { tenant }), before, after: doc });
      return stored;
    });
    c.header('ETag', etagOf(updated.version));
    return c.json(updated);
  };
  r.put('/:key', replace('put'));
  if (o.patch !== false) r.patch('/:key', replace('patch'));

  r.delete('/:key', async (c) => {
    const tenant = tenantOf(c);
    authorize(c, o.resource, 'write', tenant);
    const key = c.req.param('key');
    const expected = requiredIfMatch(c);
    const reason = takeReason(c);
    await withChange(c, reason, async (ch) => {
      const existing = await requireExisting(ch.tx, key, tenant);
      checkVersion(expected, existing);
      if (o.checkDelete) throwProblems(await o.checkDelete(ch.tx, key, existing), 409);
      if (!(await o.store.remove(ch.tx, key, existing.version, tenant)))
        throw changedMeanwhile(`${o.entityType} ${key}`, await o.store.get(ch.tx, key, tenant));
      await ch.record({
        action: 'delete',
        entityType: o.entityType,
        entityId: key,
        ...(tenant === undefined ? {} : { tenant }),
        before: documentOf(existing),
        after: null,
      });
    });
    return c.body(null, 204);
  });

  return r;
}
