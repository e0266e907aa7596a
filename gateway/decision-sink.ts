import type { DecisionRecord } from '../policy-schemas/types.gen.ts';

/**
 * One decision as the decision log records it (policy-schemas/decision-record.schema.json): who
 * asked, under which bundle, what was decided and why. Never carries arguments or outputs.
 */
export type GatewayDecisionRecord = DecisionRecord;

/** Where the gateway sends its decision records (the runtime's DecisionLog by default); `record` must never block or throw. */
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
