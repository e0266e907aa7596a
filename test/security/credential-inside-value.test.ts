import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSecrets } from '../../server/validation/secrets.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// A credential inside a longer value used to be stored (201) and exported: `--token=ghp_…`,
// `--password X` as two arguments, `postgres://u:pw@host/db`, a token in a URL's path or fragment.
// Each is now a 400 naming its pointer; credentials reach an MCP server through `env` names only.
// The benign list below is what real MCP server configurations hold and must keep passing.

const COMMAND = '/usr/local/bin/mcp-server';
let t: TestApp;
let n = 0;
beforeAll(async () => {
  t = await startTestApp({ settings: { mcpCommands: [COMMAND], mcpAllowHosts: ['mcp.example.com', 'api.example.com'] } });
});
afterAll(async () => t.close());

const stdio = (args: string[]) => ({ id: `srv-${++n}`, label: 'server', transport: { kind: 'stdio', command: COMMAND, args } });
const http = (url: string) => ({ id: `srv-${++n}`, label: 'server', transport: { kind: 'http', url } });

const refusedArgs: [string, string[], string][] = [
  ['--token=ghp_… in one argument', ['--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789'], '/transport/args/0'],
  ['--token=<any value>', ['--stdio', '--token=s3cr3t-v4lue'], '/transport/args/1'],
  ['--password X as two arguments', ['--user', 'app', '--password', 'hunter2'], '/transport/args/3'],
  ['--api-key X as two arguments', ['--api-key', 'a1b2c3d4e5'], '/transport/args/1'],
  ['--client-secret X as two arguments', ['--client-secret', 'Zm9vYmFy'], '/transport/args/1'],
  ['a database URL with a password', ['--db', 'postgres://u:pw@host/db'], '/transport/args/1'],
  ['a URL with a password inside a longer argument', ['--dsn=mysql://root:toor@10.0.0.5:3306/app'], '/transport/args/0'],
  ['a GitHub token in a URL path', ['https://api.example.com/v1/ghp_abcdefghijklmnopqrstuvwxyz0123456789/repos'], '/transport/args/0'],
  ['an access token in a URL fragment', ['--callback', 'https://app.example.com/cb#access_token=abc123def456&type=bearer'], '/transport/args/1'],
  ['a token-named query parameter', ['--url', 'https://api.example.com/feed?access_token=abc123def456'], '/transport/args/1'],
  ['a bearer header inside an argument', ['--header', 'Authorization: Bearer abcdef0123456789abcdef'], '/transport/args/1'],
  ['a basic credential header inside an argument', ['--header', 'Authorization: Basic dXNlcjpwYXNzd29yZA=='], '/transport/args/1'],
  ['a basic credential without padding', ['-H', 'authorization: basic YWRtaW46aHVudGVyMg'], '/transport/args/1'],
  ['a Slack bot token after a prefix', ['--slack=xoxb-1234567890-abcdefghij'], '/transport/args/0'],
  ['a Slack user token', ['xoxp-1234567890-abcdefghijkl'], '/transport/args/0'],
  ['an AWS access key id in an assignment', ['AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE'], '/transport/args/0'],
  ['an Anthropic key after text', ['key: sk-ant-api03-abcdefghijklmnopqrstuvwx'], '/transport/args/0'],
  ['an OpenAI key as a value', ['--openai', 'sk-proj-abcdefghijklmnopqrstuvwxyz012345'], '/transport/args/1'],
  ['a GitLab token', ['--gitlab=glpat-abcdefghijklmnopqrstu'], '/transport/args/0'],
  ['a Google API key in a query', ['https://maps.example.com/api?key=AIzaSyA-abcdefghijklmnopqrstuvwxyz0123'], '/transport/args/0'],
  ['a fine-grained GitHub token', ['github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz'], '/transport/args/0'],
  ['a JSON Web Token inside an argument', ['--auth=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig'], '/transport/args/0'],
  ['a URL with a password passed as a parameter of another URL', ['--login', 'https://app.example.com/login?next=postgres://u:pw@db/x'], '/transport/args/1'],
  ['a Slack webhook URL', ['https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX'], '/transport/args/0'],
  // MySQL's `-p`: the password joined to the flag, or (after a MySQL-family program) the word after it.
  ['a MySQL password joined to -p', ['-u', 'root', '-pS3cretPass', 'app'], '/transport/args/2'],
  ['a mycli password after -p, the program named in the arguments', ['mycli', '-h', 'db', '-u', 'root', '-p', 'hunter2'], '/transport/args/6'],
  ['an sshpass password after -p', ['sshpass', '-p', 'hunter2', 'ssh', 'deploy@db'], '/transport/args/2'],
  ['a word password joined to -p after mysqldump', ['mysqldump', '-pwarehouse', 'app'], '/transport/args/1'],
  // A whole command line in one string: flags and their values are read as they would be run.
  ['a token flag inside one command line', ['-c', 'mycli --token abc123def456 --host db'], '/transport/args/1'],
  ['a MySQL password inside one command line', ['-c', 'mysql -u root -phunter22 app'], '/transport/args/1'],
  ['an sshpass password after -p inside one command line', ['-c', 'exec sshpass -p hunter2 ssh deploy@db'], '/transport/args/1'],
  ['a password flag inside one quoted command line', ['sh', '-c', "psql --password 'Tr0ub4dor&3' -h db"], '/transport/args/2'],
  // Header-style names say what their value is, in one argument or in `name=value`.
  ['an X-Api-Key header inside an argument', ['--header', 'X-Api-Key: 3f9a8b7c6d5e4f3a'], '/transport/args/1'],
  ['an Authorization header with a raw token after a scheme', ['-H', 'Authorization: Token 9f8e7d6c5b4a39281706'], '/transport/args/1'],
  ['an X-Auth-Token header among others', ['--headers', 'Accept: application/json; X-Auth-Token: zq81tbnv77ffa02m'], '/transport/args/1'],
  ['an Authorization assignment', ['Authorization=abc123def456'], '/transport/args/0'],
  ['a Cookie assignment', ['--set', 'cookie=sessionid8f7e6d5c'], '/transport/args/1'],
  ['an Azure subscription key header', ['-H', 'Ocp-Apim-Subscription-Key: 0123456789abcdef0123'], '/transport/args/1'],
  ['an X-Auth-Key header', ['--header', 'X-Auth-Key: c2VjcmV0LWtleS0xMjM0'], '/transport/args/1'],
  ['an Authorization value passed as an environment assignment', ['-e', 'Authorization=Token abc123def456'], '/transport/args/1'],
];

// Shapes near the new rules that real configurations hold: ports, package names, versions, prose.
const nearMisses: string[][] = [
  ['-p', '8080'],
  ['-p', '8080:80', 'ghcr.io/acme/mcp'],
  ['-p3000'],
  ['npx', '-p', 'typescript', 'tsc'],
  ['npx', '-p', '@modelcontextprotocol/sdk', 'mcp-inspector'],
  ['uvx', '-p', '3.12', 'mcp-server-fetch'],
  ['-ptypescript'],
  ['mysql', '-p', '-u', 'root'],
  // MySQL asks for the password after a lone `-p`; the next word is the database.
  ['mysql', '-u', 'root', '-p', 'warehouse'],
  ['-c', 'node server.js --port 3000 --token-file /run/secrets/t'],
  ['-c', 'mysql -u root -p app'],
  ['-c', 'mycli --token ${MYCLI_TOKEN} --host db'],
  ['--header', 'X-Api-Key-Env: API_KEY'],
  ['--header', 'Authorization: see the README'],
  ['--header', 'X-Request-Id: 550e8400e29b41d4'],
  ['--header', 'Idempotency-Key: 550e8400-e29b-41d4-a716-446655440000'],
  ['--header', 'X-Auth-Mode: oauth2'],
  ['--note', 'rotate the --password monthly'],
];

const refusedUrls: [string, string][] = [
  ['a token in the URL fragment', 'https://mcp.example.com/mcp#token=abc123def456'],
  ['a GitHub token in the URL path', 'https://mcp.example.com/u/ghp_abcdefghijklmnopqrstuvwxyz0123456789/mcp'],
  ['a JSON Web Token in the URL path', 'https://mcp.example.com/s/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig/mcp'],
  ['a password in the user info', 'https://svc:p4ss@mcp.example.com/mcp'],
];

const benignArgs: string[][] = [
  ['--port=8080'],
  ['--tokenizer', 'cl100k_base'],
  ['--max-tokens', '4096'],
  ['--token-file', '/run/secrets/github'],
  ['--password-env', 'DB_PASSWORD'],
  ['--token', '${GITHUB_TOKEN}'],
  ['--secret-store', 'vault'],
  ['--auth', 'none'],
  ['--config', './config/server.json'],
  ['--root', '/srv/data', '--read-only'],
  ['--db', 'postgres://app@db.internal:5432/prod'],
  ['--url', 'https://api.github.com/repos/acme/app/issues?per_page=100&state=open'],
  ['--docs', 'https://docs.example.com/guide#authentication'],
  ['--model', 'claude-sonnet-4-5'],
  ['--task', 'task-1234567890abcdefghijklmnop'],
  ['--id', '550e8400-e29b-41d4-a716-446655440000'],
  ['--sha', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['--log-level=debug', '--timeout=30s'],
  ['--allowed-dirs', '/home/agent/projects,/tmp'],
  ['mcp-server-git', '--repository', '/srv/repo.git'],
  ['--header', 'Accept: application/json'],
  ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'],
  ['-y', '@modelcontextprotocol/server-postgres', 'postgresql://localhost/mydb'],
  ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'],
  ['--env', 'GITHUB_TOKEN=$GITHUB_TOKEN'],
  ['--api-key-env', 'OPENAI_API_KEY'],
  ['--token-url', 'https://auth.example.com/oauth/token'],
  ['--oauth-client-id', 'toolgate-prod'],
  ['--ssh-key', '~/.ssh/id_ed25519'],
  ['--secret-name', 'prod/warehouse'],
  ['--authorize-url', 'https://auth.example.com/authorize?response_type=code&client_id=toolgate'],
];

describe('a credential inside a longer value is refused with 400 naming its pointer', () => {
  for (const [name, args, pointer] of refusedArgs) {
    it(`stdio args: ${name}`, async () => {
      const body = stdio(args);
      const r = await t.request('POST', '/v1/mcp-servers', { body });
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('secret_field');
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      expect((await t.request('GET', `/v1/mcp-servers/${body.id}`)).status).toBe(404);
    });
  }
  for (const [name, url] of refusedUrls) {
    it(`http url: ${name}`, async () => {
      const r = await t.request('POST', '/v1/mcp-servers', { body: http(url) });
      expect(r.status).toBe(400);
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/transport/url');
    });
  }

  const grant = { subjects: ['analyst'], tools: ['core__knowledge-*'] };
  it.each([
    ['a database URL with a password in the label', { label: 'warehouse postgres://u:pw@host/db' }, '/label'],
    ['a GitHub token after text in the label', { label: 'bot ghp_abcdefghijklmnopqrstuvwxyz0123456789' }, '/label'],
    ['an assignment in the label', { label: 'password=hunter2' }, '/label'],
  ])('grants: %s', async (_name, extra, pointer) => {
    const r = await t.request('POST', '/v1/tenants/acme-research/grants', { body: { connectionId: `conn-${++n}`, ...grant, ...extra } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('secret_field');
    expect(r.json.errors[0].pointer).toBe(pointer);
  });

  it('an update that pastes a credential into the arguments is refused too, and the server keeps its old arguments', async () => {
    const body = stdio(['--stdio']);
    expect((await t.request('POST', '/v1/mcp-servers', { body })).status).toBe(201);
    const r = await t.request('PUT', `/v1/mcp-servers/${body.id}`, {
      headers: { 'if-match': '"1"' },
      body: { ...body, transport: { ...body.transport, args: ['--password', 'hunter2'] } },
    });
    expect(r.status).toBe(400);
    expect((await t.request('GET', `/v1/mcp-servers/${body.id}`)).json.transport.args).toEqual(['--stdio']);
  });
});

describe('realistic values that carry no credential still pass', () => {
  for (const args of nearMisses) {
    it(`stdio args near a credential shape ${JSON.stringify(args)}`, async () => {
      const r = await t.request('POST', '/v1/mcp-servers', { body: stdio(args) });
      expect(r.status, r.text).toBe(201);
    });
  }
  it('header-style names as the keys of a map are secret-shaped fields', () => {
    const headers = { 'X-Api-Key': 'v', Authorization: 'v', 'Ocp-Apim-Subscription-Key': 'v', 'X-Auth-Key': 'v', Accept: 'application/json' };
    expect(findSecrets({ headers }).map((p) => p.pointer)).toEqual([
      '/headers/X-Api-Key',
      '/headers/Authorization',
      '/headers/Ocp-Apim-Subscription-Key',
      '/headers/X-Auth-Key',
    ]);
  });

  it('a command whose -p is a password makes the next word one, and only then', () => {
    const mycli = { id: 'db', label: 'db', transport: { kind: 'stdio', command: '/usr/local/bin/mycli', args: ['-u', 'root', '-p', 'hunter2'] } };
    expect(findSecrets(mycli).map((p) => p.pointer)).toEqual(['/transport/args/3']);
    expect(findSecrets({ ...mycli, transport: { ...mycli.transport, command: '/usr/local/bin/mysql' } })).toEqual([]);
    expect(findSecrets({ ...mycli, transport: { ...mycli.transport, command: COMMAND } })).toEqual([]);
  });

  for (const args of benignArgs) {
    it(`stdio args ${JSON.stringify(args)}`, async () => {
      const r = await t.request('POST', '/v1/mcp-servers', { body: stdio(args) });
      expect(r.status, r.text).toBe(201);
    });
  }
  for (const url of ['https://mcp.example.com/mcp', 'https://mcp.example.com/mcp?session=abc&page=2', 'https://mcp.example.com/v1/mcp#section-2']) {
    it(`http url ${url}`, async () => {
      expect((await t.request('POST', '/v1/mcp-servers', { body: http(url) })).status).toBe(201);
    });
  }
  it('labels, ids and subjects that mention credentials without holding one', () => {
    for (const label of [
      'Bearer authentication via the proxy',
      'Basic authentication via the proxy',
      'Basic usage: see the README',
      'GitHub token for acme (kept in vault)',
      'sk-learn experiments',
      'risk-assessment-for-the-quarterly-review',
      'postgres://reporting@db.internal/warehouse',
      'user@example.com:github',
    ]) {
      expect(findSecrets({ connectionId: 'user@example.com:github.1', label, subjects: ['user:alice@example.com'] })).toEqual([]);
    }
  });
});
