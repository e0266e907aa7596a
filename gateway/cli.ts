import pino from 'pino';
import { loadGatewayConfig } from './config.ts';
import { startGateway } from './start.ts';
import type { GatewayLog } from './start.ts';

const USAGE = 'usage: toolgate gateway --config FILE';

/**
 * `toolgate gateway --config FILE`: runs until SIGINT/SIGTERM (or, over stdio, until the client
 * hangs up). Exit 2 for bad usage or a bad configuration, each problem named by JSON pointer.
 */
export async function runGatewayCli(args: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--config') file = args[++i];
    else if (a.startsWith('--config=')) file = a.slice('--config='.length);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else {
      process.stderr.write(`toolgate gateway: unknown option "${a.slice(0, 100)}"\n${USAGE}\n`);
      return 2;
    }
  }
  if (!file) {
    process.stderr.write(`toolgate gateway: --config FILE is required\n${USAGE}\n`);
    return 2;
  }
  const loaded = await loadGatewayConfig(file, env);
  if (!loaded.ok) {
    process.stderr.write(`toolgate gateway: ${file} is not a valid gateway configuration:\n`);
    for (const p of loaded.problems) process.stderr.write(`  ${p.pointer || '/'}: ${p.message}\n`);
    return 2;
  }
  const config = loaded.config;
  // stdout may be the MCP channel (stdio mode): everything the gateway says goes to stderr.
  const logger = pino({ level: env.TOOLGATE_LOG_LEVEL ?? 'info', base: { runtimeId: config.control.runtimeId } }, pino.destination(2));
  const log: GatewayLog = { info: (m, f) => logger.info(f ?? {}, m), warn: (m, f) => logger.warn(f ?? {}, m) };
  // Decision records are shipped to the control server by the runtime's decision log.
  const running = await startGateway(config, { log, env });
  if (running.url) logger.info({ url: running.url, tenant: config.control.tenant }, 'gateway listening');
  else logger.info({ client: config.listen.kind === 'stdio' ? config.listen.client.name : null }, 'gateway serving one client over stdio');

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    void running.stdio?.closed.then(resolve);
  });
  const timer = setTimeout(() => process.exit(0), 5_000);
  timer.unref();
  await running.close();
  logger.flush();
  return 0;
}
