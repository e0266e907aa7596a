// The SDK a runtime embeds: pull and verify a bundle, then evaluate it locally. No server code,
// database or Casbin needed.
export { loadBundle } from './load-bundle.ts';
export type { LoadedBundle } from './load-bundle.ts';
export { evaluate, policyAllows } from './evaluate.ts';
export { failuresOf, runPolicyTests } from './policy-tests.ts';
export { createView, decide } from './decide.ts';
export type { CallDecision, DecideErrorCode, ToolCall, ToolView } from './decide.ts';
export { nextState } from './next-state.ts';
export { planBatch } from './plan-batch.ts';
export type { BatchPlan, PlanGroup, PlannedCall } from './plan-batch.ts';
export { redact } from './redact.ts';
export { checkDefinition } from './check-definition.ts';
export type { DefinitionCheck } from './check-definition.ts';
export { definitionHash } from './definition-hash.ts';
export type { ToolDefinition } from './definition-hash.ts';
export { toAnthropicTools, toOpenAITools } from './encoders.ts';
export type { AnthropicTool, OpenAITool } from './encoders.ts';
export { canonicalJson } from './canonical-json.ts';
export { sha256Canonical } from './sha256.ts';
export { BUNDLE_FORMAT, BUNDLE_JWS_TYP } from './bundle-format.ts';
export { KEYSET_FORMAT, KEYSET_JWS_TYP } from './key-set-format.ts';
export { BundleClient, createBundleClient, verifyBundle } from './client/index.ts';
export type { BundleClientOptions, ClientStatus, CurrentBundle, TrustedKeys, VerifyOptions, VerifyResult } from './client/index.ts';
export { trustedKeysOf, verifyKeySet } from './client/index.ts';
export type { KeySetVerifyOptions, KeySetVerifyResult, RootKey } from './client/index.ts';
