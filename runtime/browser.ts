// The browser-safe entry of the SDK: everything that evaluates a bundle, nothing that needs
// `node:` modules (verifying signatures, the bundle client and its disk cache are Node's).
export { loadBundle } from './load-bundle.ts';
export type { LoadedBundle } from './load-bundle.ts';
export { evaluate, policyAllows } from './evaluate.ts';
export { failuresOf, runPolicyTests } from './policy-tests.ts';
export { createView, decide } from './decide.ts';
export type { CallDecision, DecideErrorCode, ToolCall, ToolView } from './decide.ts';
export { nextState } from './next-state.ts';
export { redact } from './redact.ts';
export { toAnthropicTools, toOpenAITools } from './encoders.ts';
export type { AnthropicTool, OpenAITool } from './encoders.ts';
export { BUNDLE_FORMAT, BUNDLE_JWS_TYP, bundleContentText, bundleMembers, revisionFromSha256Hex } from './bundle-format.ts';
export { KEYSET_FORMAT, KEYSET_JWS_TYP } from './key-set-format.ts';
