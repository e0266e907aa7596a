import { randomUUID } from 'node:crypto';
import type { CallApproval } from '../runtime/approval-policy.ts';
import { approvalReason, approvalSettings } from '../runtime/approval-policy.ts';
import { approvalFor, argumentsDigest, clientConfirmation, type UsedReceipts } from '../runtime/approval-receipt.ts';
import { type ApprovalConnection, type ApprovalOutcome, ApprovalRequestError, requestApproval, waitForApproval } from '../runtime/client/approval-requests.ts';
import type { CallDecision, ToolView } from '../runtime/decide.ts';
import type { TrustedKeys } from '../runtime/verify-bundle.ts';

/**
 * Why a held call does not go ahead: refused by a person, still waiting, the client declined its own
 * question, or the client already has as many calls waiting for a person as it may (`rate_limited`).
 */
export type HoldRefusal = 'approval_denied' | 'approval_pending' | 'approval_required' | 'approval_declined' | 'rate_limited';

/** `asked`: the question went to a 2026-07-28 client in the call's answer; it confirms by calling again. */
export type HoldOutcome =
  | { ok: true; approval: CallApproval; by: 'person' | 'client' }
  | { ok: false; code: HoldRefusal; message: string }
  | { ok: false; asked: true };

export type ApprovalHoldOptions = {
  /** The control plane the gateway pulls its bundle from: requests are opened there with its runtime token (null: none to ask). */
  connection: ApprovalConnection | null;
  /** The signing keys the gateway trusts bundles by; receipts are checked against the same keys. */
  trustedKeys: () => TrustedKeys | undefined;
  used: UsedReceipts;
  /** How long a call is held for a person (`timeouts.approvalMs`, 120 s). */
  approvalMs: number;
  /** How often a held call tells its client it is still waiting (default 5 s). */
  progressEveryMs?: number;
  /** Most distinct calls one client may have waiting for a person (`limits.pendingApprovalsPerClient`, 10). */
  pendingPerClient?: number;
};

/** What a held call needs: the view and decision that asked, and how to reach its client. */
export type HoldRequest = {
  /** The client identity (its `clients` entry's name) the cap on waiting calls is counted by. */
  client: string;
  view: ToolView;
  name: string;
  arguments: Record<string, unknown>;
  /** The connection the call runs under, if any: an approval given for a call through one connection never lets it through another. */
  connectionId?: string;
  decided: CallDecision;
  /**
   * Asks the MCP client itself (elicitation with 2025-11-25, an input request with 2026-07-28:
   * `asked`, answered by the client's next call); used only where the subject's roles say `approvals.by: "client"`.
   */
  askClient?: () => Promise<'approved' | 'approval_required' | 'approval_declined' | 'asked'>;
  /** Sends a progress notification to the client (when it gave a progress token). */
  progress?: (progress: number, message: string) => void;
  signal?: AbortSignal;
};

/**
 * Holds a call that needs approval: opens an approval request on the control plane (or, retried,
 * waits on the one already open for the same call), tells the client it is waiting, and ends when
 * a person decides (the receipt goes to decide()) or `approvalMs` passes (`approval_pending`, naming
 * the request and where to decide it). The client's own confirmation counts only where the roles
 * say so; everywhere else the agent's client never approves itself.
 */
export class ApprovalHold {
  /**
   * Open requests by call (subject, tool, arguments digest, connection): the same call retried waits on the same
   * request. `client` opened it; `settled` once it is known to be decided (kept so the call retried
   * gets the answer, no longer counted against the client's cap).
   */
  private readonly open = new Map<string, { id: string; expiresAtMs: number; client: string; settled: boolean }>();
  /** Requests being opened now, by call: a second identical call waits on the same one instead of opening another. */
  private readonly opening = new Map<string, Promise<string | null>>();
  /** Calls held now, per client, by call key (several waiting on one call count once). */
  private readonly holding = new Map<string, Map<string, number>>();
  /** Per client, the look at its unwatched requests under way (see forgetDecided). */
  private readonly looking = new Map<string, Promise<void>>();

  constructor(private readonly options: ApprovalHoldOptions) {}

  async hold(req: HoldRequest): Promise<HoldOutcome> {
    const settings = approvalSettings(req.view.loaded.bundle.policy, req.view.subject.roles);
    if (settings.by === 'client' && req.askClient) {
      const answer = await req.askClient();
      if (answer === 'approved') return { ok: true, approval: clientConfirmation(`client:${randomUUID()}`), by: 'client' };
      if (answer === 'approval_declined') return { ok: false, code: 'approval_declined', message: `the client declined ${req.name}` };
      if (answer === 'asked') return { ok: false, asked: true };
      // A client that cannot be asked: a person decides instead.
    }

    const connection = this.options.connection;
    if (!connection)
      return {
        ok: false,
        code: 'approval_required',
        message: `${req.name} needs a person's approval, and this gateway has no control plane to ask one through`,
      };
    // The connection is part of the call: a receipt carries no connection (DESIGN fixes its fields), so
    // the same call retried through another connection must not ride on a request a person approved for this one.
    const key = `${req.view.request.subject}\u0000${req.name}\u0000${argumentsDigest(req.arguments)}\u0000${req.connectionId ?? ''}`;
    // A request past its expiry is no longer decidable: forget it (and every other such one).
    const nowMs = Date.now();
    for (const [k, v] of this.open) if (v.expiresAtMs <= nowMs) this.open.delete(k);
    // All clients of a gateway share its runtime token, and the control plane's limit of pending
    // requests per token: one client must not take every slot. Counted before anything is asked.
    // Checked and then counted with no await between, so a burst of calls cannot all slip under it.
    const cap = this.options.pendingPerClient ?? 10;
    const full = () => !this.waitsOn(req.client, key) && this.waitingCalls(req.client) >= cap;
    if (full()) await this.forgetDecided(req.client, connection);
    if (full()) {
      return {
        ok: false,
        code: 'rate_limited',
        message: `this client already has ${cap} calls waiting for a person's approval, the most limits.pendingApprovalsPerClient (${cap}) allows; call again once some are decided or have expired (the same call retried with the same arguments is not refused)`,
      };
    }
    const started = Date.now();
    const every = this.options.progressEveryMs ?? 5_000;
    let ticks = 0;
    const timer = req.progress ? setInterval(() => req.progress?.(++ticks, `waiting for a person to approve ${req.name}`), every) : undefined;
    const held = this.holding.get(req.client) ?? new Map<string, number>();
    this.holding.set(req.client, held);
    held.set(key, (held.get(key) ?? 0) + 1);
    let outcome: ApprovalOutcome;
    let opened: ((id: string | null) => void) | undefined;
    let mine: Promise<string | null> | undefined;
    try {
      const timeoutMs = this.options.approvalMs;
      const beingOpened = this.open.has(key) ? undefined : this.opening.get(key);
      const known = this.open.get(key)?.id ?? (beingOpened ? await beingOpened : undefined) ?? undefined;
      if (!known) {
        mine = new Promise((resolve) => (opened = resolve));
        this.opening.set(key, mine);
      }
      outcome = known
        ? await waitForApproval(connection, known, { timeoutMs, signal: req.signal })
        : await requestApproval(
            connection,
            {
              subject: req.view.request.subject,
              tool: req.name,
              arguments: req.arguments,
              reason: approvalReason(req.view, req.decided, req.name, req.connectionId),
              bundleVersion: req.view.loaded.version,
              toolCallId: req.decided.toolCallId,
            },
            {
              timeoutMs,
              signal: req.signal,
              onOpened: (a) => {
                this.open.set(key, { id: a.id, expiresAtMs: Date.parse(a.expiresAt), client: req.client, settled: false });
                this.opening.delete(key);
                opened?.(a.id);
                req.progress?.(0, `approval request ${a.id} opened; waiting for a person`);
              },
            },
          );
    } catch (err) {
      const detail = err instanceof ApprovalRequestError ? err.message : (err as Error).message;
      return { ok: false, code: 'approval_required', message: `${req.name} needs a person's approval, and it could not be asked for: ${detail}` };
    } finally {
      clearInterval(timer);
      if (mine) {
        // Opening failed (or this call gave up first): whoever waited on it asks anew.
        if (this.opening.get(key) === mine) this.opening.delete(key);
        opened?.(null);
      }
      const waiting = (held.get(key) ?? 1) - 1;
      if (waiting > 0) held.set(key, waiting);
      else held.delete(key);
      if (held.size === 0 && this.holding.get(req.client) === held) this.holding.delete(req.client);
    }

    if (outcome.state === 'pending') {
      const waited = Math.round((Date.now() - started) / 1000);
      return {
        ok: false,
        code: 'approval_pending',
        message: `${req.name} waits for a person's approval (request ${outcome.id}, ${waited} s so far): decide it in the console at ${this.whereToDecide(outcome.id)} or with \`toolgate approvals approve ${outcome.id} --tenant ${this.options.connection!.tenant} --reason …\`, then call again with the same arguments`,
      };
    }
    this.open.delete(key);
    if (outcome.state === 'approved') {
      return {
        ok: true,
        approval: approvalFor(outcome.receipt, { trustedKeys: this.options.trustedKeys() ?? { keys: [] }, used: this.options.used }),
        by: 'person',
      };
    }
    if (outcome.state === 'denied') {
      return { ok: false, code: 'approval_denied', message: `a person denied ${req.name}${outcome.reason ? `: ${outcome.reason}` : ''}` };
    }
    return { ok: false, code: 'approval_denied', message: `the approval request ${outcome.id} for ${req.name} expired undecided; call again to ask anew` };
  }

  /**
   * Whether this client already asked for this very call (held now, or its request still known): a
   * retry opens nothing new (it waits on that request or hears its answer), so it is never refused.
   */
  private waitsOn(client: string, key: string): boolean {
    return this.holding.get(client)?.has(key) === true || this.open.get(key)?.client === client;
  }

  /** How many distinct calls this client has waiting for a person: held now, or with a request it opened that is still pending. */
  private waitingCalls(client: string): number {
    const held = this.holding.get(client);
    let n = held?.size ?? 0;
    for (const [k, v] of this.open) if (v.client === client && !v.settled && !held?.has(k)) n++;
    return n;
  }

  /**
   * At the cap, the client's requests nobody waits on are asked about (one look each): one a person
   * decided meanwhile no longer counts, though the call retried still gets its answer.
   */
  private forgetDecided(client: string, connection: ApprovalConnection): Promise<void> {
    // One look at a time per client: calls arriving meanwhile share it rather than asking again.
    const running = this.looking.get(client);
    if (running) return running;
    const look = this.lookAtUnwatched(client, connection).finally(() => this.looking.delete(client));
    this.looking.set(client, look);
    return look;
  }

  private async lookAtUnwatched(client: string, connection: ApprovalConnection): Promise<void> {
    const held = this.holding.get(client);
    const unwatched = [...this.open].filter(([k, v]) => v.client === client && !v.settled && !held?.has(k)).map(([, v]) => v);
    await Promise.all(
      unwatched.map(async (v) => {
        try {
          if ((await waitForApproval(connection, v.id, { timeoutMs: 0 })).state !== 'pending') v.settled = true;
        } catch {
          // Unreachable control plane: the request still counts.
        }
      }),
    );
  }

  private whereToDecide(id: string): string {
    const { url, tenant } = this.options.connection!;
    return `${url.replace(/\/+$/, '')}/#/approvals?tenant=${encodeURIComponent(tenant)}&id=${encodeURIComponent(id)}`;
  }
}
