/**
 * One decision as DESIGN's decision log records it: who asked, under which bundle, what was
 * decided and why. Never carries arguments or outputs.
 */
export type GatewayDecisionRecord = {
  at: string;
  toolCallId: string;
  subject: string;
  groups: string[];
  state: string;
  profile?: string;
  facts?: Record<string, string | number | boolean>;
  tool: string;
  decision: 'allow' | 'deny' | 'require_approval';
  errorCode?: string;
  /** A snake_case code: the evaluate filter reason of a tool that was not visible, or the gateway's own (e.g. `approved`, `bundle_expired`). */
  reason?: string;
  /** null while the gateway holds no good bundle. */
  bundleVersion: number | null;
  revision?: string;
};

/** Where the gateway sends its decision records; `record` must never block or throw. */
export type DecisionSink = { record(record: GatewayDecisionRecord): void };

/** A sink that keeps the newest records in memory (bounded), e.g. for tests and local runs. */
export function memoryDecisionSink(capacity = 10_000): DecisionSink & { records: GatewayDecisionRecord[] } {
  const records: GatewayDecisionRecord[] = [];
  return {
    records,
    record(r) {
      if (records.length >= capacity) records.shift();
      records.push(r);
    },
  };
}
