import { Hono } from 'hono';
import { randomBytes } from 'node:crypto';
import type { TokenCreate } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { authorize } from '../auth/guard.ts';
import { deleteTokenRow, getTokenRow, insertToken, listTokenRows, newTokenSecret, toToken } from '../auth/tokens.ts';
import { existingTenantIds } from '../store/tenants.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { readJson, takeReason, validOrThrow } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';

/** `/v1/tokens`: admins mint, list and revoke API tokens. Secrets are shown once and stored hashed. */
export const tokenRoutes = new Hono<AppEnv>();

tokenRoutes.get('/', async (c) => {
  authorize(c, 'token', 'read');
  const rows = await listTokenRows(c.get('deps').database.db);
  return c.json({ items: rows.map(toToken) });
});

tokenRoutes.post('/', async (c) => {
  authorize(c, 'token', 'write');
  const body = await readJson(c);
  const reason = takeReason(c, body as Record<string, unknown>);
  const req = validOrThrow<TokenCreate>('token-create', body);
  const tenants = req.tenants ?? [];
  if ((req.role === 'admin' || req.role === 'auditor') && tenants.length) {
    throw new ApiError(400, 'validation', `${req.role} tokens reach every tenant; omit tenants`, {
      errors: [{ pointer: '/tenants', message: `must be absent for role ${req.role}` }],
    });
  }
  if ((req.role === 'editor' || req.role === 'viewer') && tenants.length === 0) {
    throw new ApiError(400, 'validation', `${req.role} tokens are scoped to tenants; name at least one`, {
      errors: [{ pointer: '/tenants', message: `is required for role ${req.role}` }],
    });
  }
  if (req.role === 'runtime' && tenants.length !== 1) {
    throw new ApiError(400, 'validation', 'a runtime token belongs to exactly one tenant', {
      errors: [{ pointer: '/tenants', message: 'must name exactly one tenant' }],
    });
  }
  if (req.expiresAt !== undefined && Date.parse(req.expiresAt) <= Date.now()) {
    throw new ApiError(400, 'validation', 'expiresAt is in the past; a token must expire in the future', {
      errors: [{ pointer: '/expiresAt', message: 'must be in the future' }],
    });
  }
  const expiresAt = req.expiresAt === undefined ? null : new Date(req.expiresAt).toISOString();
  const secret = newTokenSecret();
  const id = `tok_${randomBytes(8).toString('hex')}`;
  const row = await withChange(c, reason, async (ch) => {
    const known = await existingTenantIds(ch.tx, tenants);
    const unknown = tenants.map((t, i) => ({ t, i })).filter(({ t }) => !known.has(t));
    if (unknown.length) {
      throw new ApiError(400, 'unknown_reference', `unknown tenant ${unknown[0].t}`, {
        errors: unknown.map(({ t, i }) => ({ pointer: `/tenants/${i}`, message: `unknown tenant "${t}"` })),
      });
    }
    const r = await insertToken(ch.tx, { id, label: req.label, role: req.role, tenants, secret, now: new Date().toISOString(), expiresAt });
    // The audit log records who may do what, never the secret.
    await ch.record({ action: 'create', entityType: 'token', entityId: id, before: null, after: toToken(r) });
    return r;
  });
  c.header('ETag', etagOf(row.version));
  return c.json({ ...toToken(row), token: secret }, 201);
});

tokenRoutes.get('/:id', async (c) => {
  authorize(c, 'token', 'read');
  const id = c.req.param('id');
  const row = await getTokenRow(c.get('deps').database.db, id);
  if (!row) throw new ApiError(404, 'not_found', `token ${id} does not exist`);
  c.header('ETag', etagOf(row.version));
  return c.json(toToken(row));
});

tokenRoutes.delete('/:id', async (c) => {
  authorize(c, 'token', 'write');
  const id = c.req.param('id');
  const expected = requiredIfMatch(c);
  const reason = takeReason(c);
  await withChange(c, reason, async (ch) => {
    const row = await getTokenRow(ch.tx, id);
    if (!row) throw new ApiError(404, 'not_found', `token ${id} does not exist`);
    checkVersion(expected, toToken(row));
    if (!(await deleteTokenRow(ch.tx, id, row.version))) {
      const now = await getTokenRow(ch.tx, id);
      throw changedMeanwhile(`token ${id}`, now && toToken(now));
    }
    await ch.record({ action: 'delete', entityType: 'token', entityId: id, before: toToken(row), after: null });
  });
  // After the commit, on every replica: a lookup racing the delete cannot re-cache the revoked token.
  c.get('deps').cluster.announce({ type: 'tokens-changed' });
  return c.body(null, 204);
});
