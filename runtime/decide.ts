import type { ErrorObject } from 'ajv';
import type { EvaluationRequest, EvaluationResult } from '../policy-schemas/types.gen.ts';
import { escapePointer } from '../policy-schemas/pointer.ts';
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

/** A tool call as a model emits it; `arguments` is the JSON text (or an already parsed object). */
export type ToolCall = { toolCallId?: string; name: string; arguments?: string | Record<string, unknown>; connectionId?: string };

export type DecideErrorCode = 'unavailable' | 'policy_denied' | 'invalid_json' | 'validation';

export type CallDecision = {
  toolCallId: string;
  decision: 'allow' | 'deny' | 'require_approval';
  errorCode?: DecideErrorCode;
  message?: string;
  /** For `validation`: one JSON pointer per problem in the arguments. */
  errors?: { pointer: string; message: string }[];
};

/** Evaluates a request once and keeps what decide(), planBatch() and the encoders need. */
export function createView(loaded: LoadedBundle, request: EvaluationRequest): ToolView {
  const { result, decisions, atMs, subject } = evaluateDetailed(loaded, request);
  const allowed = request.allowedConnectionIds === undefined ? undefined : new Set(request.allowedConnectionIds);
  return { loaded, request, result, decisions, atMs, subject, allowedConnectionIds: allowed };
}

/**
 * Decides one tool call against a view: unknown name → `unavailable`; not visible →
 * `policy_denied`; missing connection → `validation`; connection outside the granted set →
 * `policy_denied`; unparsable arguments → `invalid_json`; schema failure → `validation`.
 * Messages never echo argument values.
 *
 * @example
 *   decide(view, { toolCallId: 'call_1', name: 'core__fs_read', arguments: '{"path":"a.txt"}' })
 */
export function decide(view: ToolView, call: ToolCall): CallDecision {
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
    try {
      args = JSON.parse(args);
    } catch {
      return deny(toolCallId, 'invalid_json', 'Invalid tool arguments JSON');
    }
  } else if (args === undefined) {
    args = {};
  }
  const validate = tool.validateInput;
  if (!validate?.(args)) {
    return {
      toolCallId,
      decision: 'deny',
      errorCode: 'validation',
      message: `the arguments do not match the input schema of ${tool.id}`,
      errors: argumentProblems(validate?.errors ?? []),
    };
  }
  return { toolCallId, decision: decision === REQUIRE_APPROVAL ? 'require_approval' : 'allow' };
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
    if (e.keyword === 'required') {
      pointer += `/${escapePointer(String((e.params as { missingProperty: string }).missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      // A field name comes from the arguments: name it only when it looks like a field name.
      const field = String((e.params as { additionalProperty: string }).additionalProperty);
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
