export { BundleClient, createBundleClient } from './bundle-client.ts';
export type { BundleClientOptions, ClientStatus, CurrentBundle } from './bundle-client.ts';
export { verifyBundle } from '../verify-bundle.ts';
export type { TrustedKeys, VerifyOptions, VerifyResult } from '../verify-bundle.ts';
export { createDecisionLog } from './decision-log.ts';
export type { DecisionLog, DecisionLogOptions, DecisionLogStats } from './decision-log.ts';
