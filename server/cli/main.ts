// `toolgate <command> …`: one module per command in ./commands, loaded on demand.

type Command = { summary: string; load: () => Promise<{ run: (args: string[]) => Promise<number> }> };

/** Every CLI command; each module exports `run(args)` returning an exit code. */
const commands: Record<string, Command> = {
  serve: { summary: 'serve the API and console (HOST, PORT, TOOLGATE_DB, TOOLGATE_KEYS_DIR)', load: () => import('./commands/serve.ts') },
  migrate: { summary: 'migrate the database to the latest version (--down: all the way down)', load: () => import('./commands/migrate.ts') },
  audit: {
    summary: 'audit export [--format jsonl|csv] [--out FILE] | audit verify [FILE] [--checkpoint CP] | audit checkpoint',
    load: () => import('./commands/audit.ts'),
  },
  compile: {
    summary:
      'compile --tenant T --out DIR [--sign [--reason TEXT]]: compile the draft into DIR/bundle.json; --sign also writes bundle.jws with the production key, audited (publishes nothing)',
    load: () => import('./commands/compile.ts'),
  },
  verify: {
    summary: 'verify --bundle F --signature F (--root F --keyset F | --jwks F) [--tenant T]: the checks a runtime makes before accepting a bundle',
    load: () => import('./commands/verify.ts'),
  },
  evaluate: { summary: 'evaluate --bundle F --request F: print what simulate answers for the request', load: () => import('./commands/evaluate.ts') },
  keys: {
    summary:
      'keys list | rotate [--promote-after D] | promote [KID] | retire KID [--reissue] | rotate-root | reissue | root  [--root-key FILE]: staged key rotation and the root-signed key set',
    load: () => import('./commands/keys.ts'),
  },
  tools: {
    summary: 'tools list [--tenant T --subject S --groups a,b --state X --profile P --format openai|anthropic]: what the model would see',
    load: () => import('./commands/tools.ts'),
  },
  gateway: {
    summary: "gateway --config FILE: an MCP gateway enforcing the tenant's bundle in front of its upstream MCP servers",
    load: () => import('./commands/gateway.ts'),
  },
  test: {
    summary:
      'test --bundle F --tests F | test --dir D --tenant T: run policy tests offline against a bundle or an exported configuration (exit 1 on a failure, 2 on unusable files)',
    load: () => import('./commands/test.ts'),
  },
  export: {
    summary: 'export --dir D: write the configuration as one file per entity (TOOLGATE_URL, TOOLGATE_TOKEN)',
    load: () => import('./commands/export.ts'),
  },
  apply: {
    summary: 'apply --dir D [--plan] [--prune] --reason R: make the server match D (TOOLGATE_URL, TOOLGATE_TOKEN); --plan only prints the changes',
    load: () => import('./commands/apply.ts'),
  },
  mirror: {
    summary:
      'mirror --dir D: write the static mirror (keyset.json, <tenant>/latest.json, <tenant>/<version>.json, each with .jws) once (TOOLGATE_DB, TOOLGATE_KEYS_DIR)',
    load: () => import('./commands/mirror.ts'),
  },
  approvals: {
    summary: 'approvals list|approve ID|deny ID --tenant T [--reason R]: decide approval requests (TOOLGATE_URL, TOOLGATE_TOKEN)',
    load: () => import('./commands/approvals.ts'),
  },
  mcp: { summary: "mcp sync ID [--timeout MS]: import an MCP server's tools (new and changed ones quarantined)", load: () => import('./commands/mcp.ts') },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  return ['usage: toolgate <command> [options]', '', ...Object.entries(commands).map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const cmd = commands[name];
  if (!cmd) {
    console.error(`toolgate: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return (await cmd.load()).run(args);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`toolgate: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
