import type { ErrorObject } from 'ajv';
import type { ConstraintRef, EvaluationRequest, EvaluationResult } from '../policy-schemas/types.gen.ts';
import { escapePointer } from '../policy-schemas/pointer.ts';
import { type CallApproval, redeemApproval } from './approval-policy.ts';
import { checkConstraints } from './constraints.ts';
import { parseArguments, membersNamed, readArgumentsValue } from './json-arguments.ts';
import { MAX_NESTING } from './json-schema-dialect.ts';
import { evaluateDetailed, grantedConnections, NOT_VISIBLE, REQUIRE_APPROVAL } from './evaluate.ts';
import type { LoadedBundle, SubjectInfo } from './load-bundle.ts';

/** What one request may see, fixed for a turn: evaluate()'s answer plus what call-time checks need. */
export type ToolView = {
  readonly loaded: LoadedBundle;
  readonly request: EvaluationRequest;
  readonly result: EvaluationResult;
  /** Per tool position: 0 not visible, 1 allow, 2 require approval. */
  readonly decisions: Uint8Array;
  readonly atMs: number;
  readonly subject: SubjectInfo;
  readonly allowedConnectionIds: ReadonlySet<string> | undefined;
};

/** A tool call as a model emits it; `arguments` is the JSON text, or an already parsed JSON value (R14.6: nothing else). */
export type ToolCall = { toolCallId?: string; name: string; arguments?: string | Record<string, unknown>; connectionId?: string };

export type DecideErrorCode = 'unavailable' | 'policy_denied' | 'invalid_json' | 'validation' | 'approval_invalid';

export type CallDecision = {
  toolCallId: string;
  decision: 'allow' | 'deny' | 'require_approval';
  errorCode?: DecideErrorCode;
  message?: string;
  /** For `validation`: one JSON pointer per problem in the arguments. */
  errors?: { pointer: string; message: string }[];
  /** The argument constraint that denied the call or asked for approval (never the arguments). */
  constraint?: ConstraintRef;
  /** The approval that let a require_approval call through (its request id and who gave it). */
  approval?: { id: string; by: 'person' | 'client' };
};

/** `approval`: evidence for a call that needs it (approvalFor(receipt, …) in approval-receipt.ts). */
export type DecideOptions = { approval?: CallApproval };

/** Evaluates a request once and keeps what decide(), planBatch() and the encoders need. */
export function createView(loaded: LoadedBundle, request: EvaluationRequest): ToolView {
  const { result, decisions, atMs, subject } = evaluateDetailed(loaded, request);
  const allowed = request.allowedConnectionIds === undefined ? undefined : new Set(request.allowedConnectionIds);
  return { loaded, request, result, decisions, atMs, subject, allowedConnectionIds: allowed };
}

/**
 * Decides one tool call against a view: unknown name → `unavailable`; not visible →
 * `policy_denied`; missing connection → `validation`; connection outside the granted set →
 * `policy_denied`; unparsable arguments → `invalid_json`; schema failure → `validation`;
 * a `connectionId` member anywhere in the arguments → `validation`; a failing argument constraint
 * → `policy_denied` (a `deny` one, whichever role holds it) or `require_approval`, naming it in
 * `constraint`; a `require_approval` call with `options.approval` valid for exactly this call →
 * `allow` once, else `approval_invalid`. Messages never echo argument values.
 *
 * @example
 *   decide(view, { toolCallId: 'call_1', name: 'core__fs_read', arguments: '{"path":"a.txt"}' })
 */
export function decide(view: ToolView, call: ToolCall, options?: DecideOptions): CallDecision {
  if (!options?.approval) return decideCall(view, call, null);
  // A receipt matters only to a call that needs approval: it is checked (and used up) then alone,
  // against the arguments as decideCall read them (the text is not parsed a second time).
  const read: ReadArguments = { value: undefined };
  const decided = decideCall(view, call, read);
  return decided.decision === 'require_approval' ? redeemApproval(view, call, read.value, decided, options.approval) : decided;
}

/** Where decideCall leaves the arguments it read, for a caller that needs them after. */
type ReadArguments = { value: unknown };

function decideCall(view: ToolView, call: ToolCall, read: ReadArguments | null): CallDecision {
  const toolCallId = typeof call.toolCallId === 'string' && call.toolCallId !== '' ? call.toolCallId : globalThis.crypto.randomUUID();
  const tool = typeof call.name === 'string' ? view.loaded.byId.get(call.name) : undefined;
  if (!tool) return deny(toolCallId, 'unavailable', 'no such tool');
  const decision = view.decisions[tool.pos];
  if (decision === NOT_VISIBLE) return deny(toolCallId, 'policy_denied', `${tool.id} is not available to this request`);

  if (call.connectionId !== undefined || tool.requiresConnection) {
    if (typeof call.connectionId !== 'string' || call.connectionId === '') {
      return deny(toolCallId, 'validation', `${tool.id} needs a connectionId, passed beside the arguments`);
    }
    const granted = grantedConnections(view.subject, tool, view.atMs, view.allowedConnectionIds);
    if (!granted.includes(call.connectionId)) {
      return deny(toolCallId, 'policy_denied', `the connection is not granted for ${tool.id}`);
    }
  }

  let args: unknown = call.arguments;
  if (typeof args === 'string') {
    // I-JSON (R14.6): a big integer or a duplicate member name is refused before the schema sees
    // a value JSON.parse has rounded or chosen; nesting past R14.3's limit is never checked.
    const parsed = parseArguments(args);
    if (!parsed.ok) return parsed.code === 'invalid_json' ? deny(toolCallId, 'invalid_json', parsed.message) : tooDeep(toolCallId, tool.id);
    args = parsed.value;
  } else if (args === undefined) {
    args = {};
  } else {
    // Handed over as a value (R14.6): only a JSON value, the value of the text the upstream will get
    // (no NaN sent as null, no undefined dropped, no cycle); nesting as for text.
    const read = readArgumentsValue(args);
    if (!read.ok) return read.code === 'invalid_json' ? deny(toolCallId, 'invalid_json', read.message) : tooDeep(toolCallId, tool.id);
  }
  const validate = tool.validateInput;
  let valid: boolean;
  try {
    valid = validate?.(args) === true;
  } catch {
    // The validator recurses with a recursive schema: arguments it cannot finish checking cannot be
    // allowed either (nesting is bounded above and cycles refused, so this is a last guard).
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'validation',
      message: `the arguments could not be checked against the input schema of ${tool.id} (nested too deeply, or not JSON data)`,
      errors: [{ pointer: '', message: 'could not be checked against the input schema' }],
    };
  }
  if (!valid) {
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'validation',
      message: `the arguments do not match the input schema of ${tool.id}`,
      errors: argumentProblems(validate?.errors ?? []),
    };
  }
  // Connections travel beside the arguments: a schema that leaves objects open must not let one
  // ride inside them, where the tool would read a connection nobody checked against the grants.
  if (holdsConnectionMember(args, typeof call.arguments === 'string')) {
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'validation',
      message: `the arguments of ${tool.id} hold a connectionId; a connection is passed beside the arguments, never in them`,
      errors: typeof call.arguments === 'string' ? connectionMembersInText(call.arguments) : connectionMembers(args, false),
    };
  }
  if (read !== null) read.value = args;
  // Argument constraints last (R7.11): they judge arguments the input schema already accepted.
  const verdict = checkConstraints(view.loaded, view.subject, tool, args);
  if (verdict !== null) {
    const { constraint } = verdict;
    if (verdict.outcome === 'deny') {
      return { toolCallId, decision: 'deny', errorCode: 'policy_denied', message: `${tool.id}: ${constraint.reason}`, constraint };
    }
    return { toolCallId, decision: 'require_approval', message: `${tool.id} needs approval: ${constraint.reason}`, constraint };
  }
  return { toolCallId, decision: decision === REQUIRE_APPROVAL ? 'require_approval' : 'allow' };
}

/** Arguments nested past R14.3's limit: valid JSON, never checked, never allowed. */
function tooDeep(toolCallId: string, toolId: string): CallDecision {
  return {
    toolCallId,
    decision: 'deny',
    errorCode: 'validation',
    message: `the arguments of ${toolId} nest deeper than ${MAX_NESTING} levels`,
    errors: [{ pointer: '', message: `nests deeper than ${MAX_NESTING} levels` }],
  };
}

function deny(toolCallId: string, errorCode: DecideErrorCode, message: string): CallDecision {
  return { toolCallId, decision: 'deny', errorCode, message };
}

// ajv's messages name keywords and schema values (limits, patterns), never the offending data.
function argumentProblems(errors: ErrorObject[]): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let pointer = e.instancePath;
    let message = e.message ?? 'is invalid';
    // Where each keyword points is R14.8's: a missing property (required, dependentRequired, draft-07
    // dependencies) at its own pointer, a property not allowed at its name when it looks like one.
    if (e.keyword === 'required' || e.keyword === 'dependentRequired' || e.keyword === 'dependencies') {
      pointer += `/${escapePointer(String((e.params as { missingProperty: string }).missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties') {
      // A field name comes from the arguments: name it only when it looks like a field name.
      const params = e.params as { additionalProperty?: string; unevaluatedProperty?: string };
      const field = String(params.additionalProperty ?? params.unevaluatedProperty);
      if (PLAIN_FIELD.test(field)) {
        pointer += `/${field}`;
        message = 'is not a known field';
      } else {
        message = 'has a field that is not allowed';
      }
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer, message });
  }
  return out;
}

const PLAIN_FIELD = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

const CONNECTION_MEMBER = 'connectionId';
// Past this many nodes a walk over arguments handed over as objects remembers what it visited:
// JSON text cannot make a cycle or share a subtree, but objects can.
const WALK_UNTRACKED = 1024;

/**
 * Whether any object at any depth (arrays included) has an own member named `connectionId`.
 * Runs on every allowed call, so the common flat object costs one pass over its keys and no
 * allocation; nested containers go on a stack (no recursion: deep JSON must not overflow it).
 */
function holdsConnectionMember(root: unknown, fromText: boolean): boolean {
  if (typeof root !== 'object' || root === null) return false;
  let node: object = root;
  let stack: object[] | undefined;
  let seen: Set<object> | undefined;
  let visited = 0;
  for (;;) {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v === 'object' && v !== null && !seen?.has(v)) (stack ??= []).push(v);
      }
    } else {
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        if (key === CONNECTION_MEMBER) return true;
        const v: unknown = (node as Record<string, unknown>)[key];
        if (typeof v === 'object' && v !== null && !seen?.has(v)) (stack ??= []).push(v);
      }
    }
    if (stack === undefined || stack.length === 0) return false;
    node = stack.pop()!;
    if (seen) seen.add(node);
    else if (!fromText && ++visited > WALK_UNTRACKED) seen = new Set([node]);
  }
}

/** connectionMembers for JSON text: in the order the text writes them, not JavaScript's key order. */
function connectionMembersInText(text: string): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = [];
  const reported = new Set<string>();
  for (const path of membersNamed(text, CONNECTION_MEMBER)) {
    const pointer = plainPointer(path);
    if (reported.has(pointer.at)) continue;
    reported.add(pointer.at);
    out.push({ pointer: pointer.at, message: pointer.exact ? MEMBER_MESSAGE : INSIDE_MESSAGE });
  }
  return out;
}

const MEMBER_MESSAGE = 'is not allowed: a connection is passed beside the arguments';
const INSIDE_MESSAGE = 'holds a connectionId, which is not allowed in arguments';

/** A node on the way down, linked to its parent: pointers are spelled only for the members found. */
type Step = { readonly node: unknown; readonly up: Step | null; readonly token: string | number };

/**
 * One problem per `connectionId` member, in document order. The pointer names member names only
 * while they look like field names (as R7.6 does for unknown fields): at the first that does not,
 * it stops at that member's object, so no key shaped like a secret is repeated back.
 */
function connectionMembers(root: unknown, fromText: boolean): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = [];
  const reported = new Set<string>();
  const seen = fromText ? null : new Set<object>();
  const stack: Step[] = [{ node: root, up: null, token: '' }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const node = step.node;
    if (typeof node !== 'object' || node === null) continue;
    if (seen) {
      if (seen.has(node)) continue;
      seen.add(node);
    }
    const from = stack.length;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) if (typeof node[i] === 'object' && node[i] !== null) stack.push({ node: node[i], up: step, token: i });
    } else {
      for (const key of Object.keys(node)) {
        if (key === CONNECTION_MEMBER) {
          const pointer = pointerOf({ node: null, up: step, token: key });
          if (!reported.has(pointer.at)) {
            reported.add(pointer.at);
            out.push({
              pointer: pointer.at,
              message: pointer.exact ? MEMBER_MESSAGE : INSIDE_MESSAGE,
            });
          }
        }
        const v = (node as Record<string, unknown>)[key];
        if (typeof v === 'object' && v !== null) stack.push({ node: v, up: step, token: key });
      }
    }
    // Children were pushed in order; reversed, they pop in document order.
    for (let i = from, j = stack.length - 1; i < j; i++, j--) [stack[i], stack[j]] = [stack[j], stack[i]];
  }
  return out;
}

function pointerOf(leaf: Step): { at: string; exact: boolean } {
  const tokens: (string | number)[] = [];
  for (let s: Step | null = leaf; s?.up; s = s.up) tokens.push(s.token);
  tokens.reverse();
  return plainPointer(tokens);
}

/** The pointer of a path, cut at the first member name that does not look like a field name. */
function plainPointer(tokens: readonly (string | number)[]): { at: string; exact: boolean } {
  let at = '';
  for (const token of tokens) {
    if (typeof token === 'string' && !PLAIN_FIELD.test(token)) return { at, exact: false };
    at += `/${token}`;
  }
  return { at, exact: true };
}
