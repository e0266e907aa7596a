import { runGatewayCli } from '../../../gateway/cli.ts';

/** `toolgate gateway --config FILE`: the MCP gateway (code in gateway/). */
export function run(args: string[]): Promise<number> {
  return runGatewayCli(args);
}
