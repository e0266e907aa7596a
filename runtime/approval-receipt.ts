import { createHash, createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import type { ApprovalReceipt, ApprovalReceiptPayload } from '../policy-schemas/types.gen.ts';
import { canonicalJson } from './canonical-json.ts';
import type { ApprovalRedemption, ApprovedCall, CallApproval } from './approval-policy.ts';
import { parseDetachedJws } from './detached-jws.ts';
import type { TrustedKeys } from './verify-bundle.ts';

export type { ApprovalReceipt, ApprovalReceiptPayload } from '../policy-schemas/types.gen.ts';

/** The `format` of a receipt's payload. */
export const APPROVAL_FORMAT = 'toolgate.approval/v1';
/** The `typ` of a receipt's detached JWS. */
export const APPROVAL_JWS_TYP = 'toolgate-approval+jws';

export type ReceiptCheck = { ok: true; payload: ApprovalReceiptPayload } | { ok: false; message: string };

/**
 * Receipt ids already used, each remembered until its receipt expires (a receipt allows one call).
 * The bundle client keeps one on disk in its cache directory so a restart forgets nothing.
 */
export interface UsedReceipts {
  has(id: string, nowMs: number): boolean;
  /** Records a use; false when the id was already used (then the call must not run). */
  use(id: string, expiresAtMs: number, nowMs: number): boolean;
}

/** Used receipt ids in memory: enough for one process that never restarts between approval and call. */
export class MemoryUsedReceipts implements UsedReceipts {
  /** Each used id with the instant (ms) its receipt expires, after which it need not be remembered. */
  private readonly used = new Map<string, number>();

  has(id: string, nowMs: number): boolean {
    const until = this.used.get(id);
    return until !== undefined && until > nowMs;
  }

  use(id: string, expiresAtMs: number, nowMs: number): boolean {
    if (this.has(id, nowMs)) return false;
    for (const [k, until] of this.used) if (until <= nowMs) this.used.delete(k);
    this.used.set(id, expiresAtMs);
    return true;
  }
}

/** `sha256:<hex>` of the RFC 8785 JSON of a call's arguments: what a receipt binds to. */
export function argumentsDigest(args: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('hex')}`;
}

const publicKeys = new Map<string, KeyObject>();

function publicKeyOf(kid: string, x: string): KeyObject {
  const cacheKey = `${kid}\u0000${x}`;
  let key = publicKeys.get(cacheKey);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    publicKeys.set(cacheKey, key);
  }
  return key;
}

/**
 * Checks a receipt offline against the call about to run: a detached JWS of the expected `typ`,
 * by a key the trusted key set lists as `active` (DESIGN "Approvals"; a `next`, retired or unknown
 * key is refused; a key pinned without any status, from a bare JWKS, is taken as the operator's choice),
 * over the RFC 8785 bytes of the payload; the payload for this tenant, subject, tool and
 * arguments digest, and not expired. Does not consume the receipt (see approvalFor).
 */
export function verifyApprovalReceipt(receipt: unknown, call: ApprovedCall, options: { trustedKeys: TrustedKeys; now?: Date }): ReceiptCheck {
  if (typeof receipt !== 'object' || receipt === null) return refuse('no approval receipt');
  const { payload, signature } = receipt as Partial<ApprovalReceipt>;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return refuse('the approval receipt has no payload');
  const header = parseDetachedJws(signature, APPROVAL_JWS_TYP);
  if (!header.ok) return refuse(`the approval receipt's signature is malformed: ${header.message}`);
  const jwk = options.trustedKeys.keys.find((k) => k.kid === header.kid);
  if (!jwk || typeof jwk.x !== 'string' || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    return refuse('the approval receipt is signed by a key this runtime does not trust');
  }
  if (jwk.status === 'retired') return refuse('the approval receipt is signed by a retired key');
  // Only an active key signs receipts: a `next` key is published before it ever signs anything.
  if (jwk.status !== undefined && jwk.status !== 'active') return refuse(`the approval receipt is signed by a key that is ${String(jwk.status)}, not active`);
  let bytes: string;
  try {
    bytes = canonicalJson(payload);
  } catch {
    return refuse('the approval receipt payload is not JSON data');
  }
  const signingInput = `${header.protectedB64}.${Buffer.from(bytes, 'utf8').toString('base64url')}`;
  let good = false;
  try {
    good = verifySignature(null, Buffer.from(signingInput, 'ascii'), publicKeyOf(header.kid, jwk.x), Buffer.from(header.signatureB64, 'base64url'));
  } catch {
    good = false;
  }
  if (!good) return refuse('the approval receipt signature does not verify');

  const p = payload as Partial<ApprovalReceiptPayload>;
  if (p.format !== APPROVAL_FORMAT) return refuse('the approval receipt is not in the toolgate.approval/v1 format');
  if (typeof p.id !== 'string' || p.id === '') return refuse('the approval receipt names no request');
  if (p.tenant !== call.tenant) return refuse('the approval receipt is for another tenant');
  if (p.subject !== call.subject) return refuse('the approval receipt is for another subject');
  if (p.tool !== call.tool) return refuse('the approval receipt is for another tool');
  if (p.argumentsDigest !== argumentsDigest(call.arguments)) return refuse('the approval receipt is for other arguments');
  const expires = typeof p.expiresAt === 'string' ? Date.parse(p.expiresAt) : Number.NaN;
  if (!Number.isFinite(expires)) return refuse('the approval receipt has no expiry');
  if (expires <= (options.now ?? new Date()).getTime()) return refuse('the approval receipt expired');
  return { ok: true, payload: payload as ApprovalReceiptPayload };
}

function refuse(message: string): ReceiptCheck {
  return { ok: false, message };
}

/**
 * Evidence for decide(): the receipt, checked against the exact call decide is deciding, and used
 * up when it lets that call through, so the same receipt never allows a second call.
 *
 * @example
 *   decide(view, call, { approval: approvalFor(receipt, { trustedKeys, used }) })
 */
export function approvalFor(receipt: unknown, options: { trustedKeys: TrustedKeys; used: UsedReceipts; now?: () => Date }): CallApproval {
  return {
    redeem(call: ApprovedCall): ApprovalRedemption {
      const now = options.now?.() ?? new Date();
      const checked = verifyApprovalReceipt(receipt, call, { trustedKeys: options.trustedKeys, now });
      if (!checked.ok) return checked;
      const { id, expiresAt } = checked.payload;
      if (!options.used.use(id, Date.parse(expiresAt), now.getTime())) return { ok: false, message: 'the approval receipt was already used' };
      return { ok: true, id, by: 'person' };
    },
  };
}

/** A client's own confirmation, counted only where the role says `approvals.by: "client"`. */
export function clientConfirmation(id: string): CallApproval {
  return { redeem: () => ({ ok: true, id, by: 'client' }) };
}
