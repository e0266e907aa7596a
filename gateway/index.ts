// The MCP gateway: a runtime deployed in front of MCP servers, built on runtime/ alone.
export { loadGatewayConfig } from './config.ts';
export type { ConfigProblem, ConfigResult, ResolvedClient, ResolvedConfig } from './config.ts';
export { memoryDecisionSink } from './decision-sink.ts';
export type { DecisionSink, GatewayDecisionRecord } from './decision-sink.ts';
export { Gateway, GatewaySession } from './gateway.ts';
export type { RefusalCode } from './gateway.ts';
export { startGateway } from './start.ts';
export type { GatewayHealth, RunningGateway, StartOptions } from './start.ts';
export { runGatewayCli } from './cli.ts';
