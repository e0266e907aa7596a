import { escapePointer } from '../../policy-schemas/index.ts';
import type { ProblemDetail } from '../errors.ts';

// Toolgate stores connection IDs and variable names, never what they unlock. A credential is
// refused wherever it sits: under a secret-shaped field name, as a whole value, or inside a longer
// value (an argument `--token=…`, the value after `--password`, URL user info with a password, a
// secret-named URL parameter, a token with a well-known prefix anywhere in the text).
//
// False positives are kept rare by looking for shapes, not for words: a secret-named flag counts
// only with a value that could be a credential (not a path, an environment reference or a
// boolean); names are split into words, so `--tokenizer` and `--max-tokens` are not `--token`;
// prefixes need the length real tokens have and a boundary before them (`task-…` is not `sk-…`).

// Field names that carry credentials (object keys).
const SECRET_NAME =
  /token|secret|passw(?:or)?d|passphrase|api[_-]?key|authorization|private[_-]?key|credential|bearer|cookie|access[_-]?key|signing[_-]?key|auth[_-]?key|subscription[_-]?key/i;

// Tokens with well-known shapes, found anywhere in a value (each after a non-alphanumeric boundary).
const KNOWN_TOKENS: readonly [string, RegExp][] = [
  ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ['a GitHub token', /(?:^|[^A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/],
  ['a GitLab token', /(?:^|[^A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}/],
  ['a Slack token', /(?:^|[^A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/],
  ['an Anthropic or OpenAI key', /(?:^|[^A-Za-z0-9])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/],
  ['a Stripe key', /(?:^|[^A-Za-z0-9])[sprk]k_(?:live|test)_[A-Za-z0-9]{8,}/],
  ['an xAI key', /(?:^|[^A-Za-z0-9])xai-[A-Za-z0-9]{20,}/],
  ['an AWS access key id', /(?:^|[^A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])/],
  ['a Google API key', /(?:^|[^A-Za-z0-9])AIza[0-9A-Za-z_-]{30,}/],
  ['an npm token', /(?:^|[^A-Za-z0-9])npm_[A-Za-z0-9]{36}/],
  ['a Hugging Face token', /(?:^|[^A-Za-z0-9])hf_[A-Za-z0-9]{30,}/],
  // A bearer credential: at least 16 token characters with a digit ("Bearer authentication" is prose).
  ['a bearer token', /(?:^|[^A-Za-z0-9])Bearer\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}/i],
  ['a JSON Web Token', /(?:^|[^A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/],
  // Webhook URLs whose path is the credential.
  ['a Slack webhook', /hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9]+\/[A-Za-z0-9]+\/[A-Za-z0-9]{16,}/],
  ['a Discord webhook', /discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{30,}/],
  ['a Telegram bot token', /(?:^|[^A-Za-z0-9])(?:bot)?\d{6,12}:[A-Za-z0-9_-]{30,}/],
];

// Words that make a flag, parameter or `key=value` name secret-shaped; pairs count when adjacent.
const SECRET_WORDS = new Set([
  'token',
  'secret',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'apikey',
  'credential',
  'credentials',
  'bearer',
  'authorization',
  'cookie',
]);
const SECRET_PAIRS = new Set([
  'api key',
  'private key',
  'access key',
  'secret key',
  'signing key',
  'client secret',
  'auth token',
  'access token',
  'session key',
  'auth key',
  'subscription key',
]);
// In a URL's query or fragment these carry signatures and keys too (pre-signed URLs, `?key=AIza…`).
const URL_PARAM_WORDS = new Set([...SECRET_WORDS, 'key', 'sig', 'signature', 'auth']);
// A last word that makes the name point at a credential rather than hold one (`--token-file`).
const POINTS_ELSEWHERE = new Set([
  'file',
  'path',
  'dir',
  'directory',
  'env',
  'var',
  'variable',
  'name',
  'id',
  'url',
  'uri',
  'endpoint',
  'host',
  'header',
  'length',
  'limit',
  'count',
  'type',
  'kind',
  'mode',
  'max',
  'min',
  'size',
  'ttl',
  'timeout',
  'expiry',
  'prefix',
  'field',
  'format',
  'store',
  'helper',
  'command',
  'cmd',
  'source',
]);

/** A name split into lower-case words: `--client-secret`, `clientSecret`, `CLIENT_SECRET` → client, secret. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether a flag, parameter or `key=value` name says its value is a credential. */
function secretShapedName(name: string, words: ReadonlySet<string> = SECRET_WORDS): boolean {
  const w = wordsOf(name);
  if (w.length === 0 || POINTS_ELSEWHERE.has(w[w.length - 1])) return false;
  return w.some((x, i) => words.has(x) || (i > 0 && SECRET_PAIRS.has(`${w[i - 1]} ${x}`)));
}

/** Values that cannot be a credential: empty, an environment reference, a path, a boolean-like word. */
function harmlessValue(v: string): boolean {
  return (
    v === '' ||
    /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%)$/.test(v) ||
    /^(?:\/|\.{1,2}\/|~\/|[A-Za-z]:\\)/.test(v) ||
    /^(?:true|false|yes|no|none|null|stdin|-)$/i.test(v)
  );
}

const FLAG_ONLY = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/;

// Programs whose `-p` is a password. The MySQL family takes it joined only (`-pSECRET`; in `mysql -p app`
// the password is asked for and `app` is the database, as MySQL documents), mycli and sshpass also as
// the next word. Elsewhere `-p` is a port, a package (`npx -p`) or a profile.
const PASSWORD_P_PROGRAMS = new Set(['mysql', 'mysqldump', 'mysqladmin', 'mysqlimport', 'mysqlshow', 'mariadb', 'mariadb-dump', 'mycli', 'sshpass']);
const SPACED_P_PROGRAMS = new Set(['mycli', 'sshpass']);
// `-pSECRET` in one word: a password to the MySQL family. `-p8080` (a port), `-p3.12` (a version),
// `-p8080:80` (a port mapping) and `-p/path` are not.
const JOINED_P = /^-p(.+)$/;

/** Whether one word is `-p<password>`: after a password-`-p` program any such value, elsewhere only a credential-shaped one. */
function joinedPassword(word: string, passwordP: boolean): boolean {
  const m = JOINED_P.exec(word);
  return m !== null && passwordAfterP(m[1]) && (passwordP || credentialShaped(m[1]));
}

/** Whether `-p<rest>` (or the word after a lone `-p` of a password-`-p` program) is a password rather than a port, version or path. */
function passwordAfterP(rest: string): boolean {
  // Not a port, version or port mapping, nor an npm package (`npx -p @scope/pkg`).
  return !harmlessValue(rest) && !/^[0-9][0-9.:/-]*$/.test(rest) && !/^@[a-z0-9~-][a-z0-9._~-]*\/[a-z0-9._~-]+(?:@[^\s]*)?$/.test(rest) && rest.length >= 2;
}

/** The program a command word names: its base name, without a Windows `.exe`. */
function programOf(word: string): string {
  return (word.split(/[\\/]/).pop() ?? word).replace(/\.exe$/i, '').toLowerCase();
}

/**
 * A value that could be a credential inside running text (a whole command line in one string):
 * with a digit or a symbol in it, or long. "use --token carefully" names a flag but no credential.
 */
function credentialShaped(v: string): boolean {
  return !harmlessValue(v) && (/[0-9]/.test(v) || /[^A-Za-z]/.test(v) || v.length >= 16);
}

/** Why a whole command line in one string carries a credential: `--token abc123`, `-pSECRET`, `mysql -p pw`. */
function commandLineCredential(value: string): string | undefined {
  if (!/\s/.test(value)) return undefined;
  const words = value
    .split(/\s+/)
    .map((w) => w.replace(/^["']+|["']+$/g, ''))
    .filter(Boolean);
  let passwordP = false;
  let spacedP = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (PASSWORD_P_PROGRAMS.has(programOf(w))) passwordP = true;
    if (SPACED_P_PROGRAMS.has(programOf(w))) spacedP = true;
    const next = words[i + 1];
    const flag = FLAG_ONLY.exec(w);
    if (flag && next !== undefined && !next.startsWith('-') && secretShapedName(flag[1]) && credentialShaped(next)) return `passes a credential after ${w}`;
    if (spacedP && w === '-p' && next !== undefined && !next.startsWith('-') && passwordAfterP(next)) return 'passes a password after -p';
    if (joinedPassword(w, passwordP)) return 'passes a password as -p<password>';
  }
  return undefined;
}

// A header line in a value, `X-Api-Key: …` or `Authorization: Token …`: the name says what the value is.
const HEADER_LINE = /(?:^|[\r\n;,])\s*([A-Za-z][A-Za-z0-9-]*)\s*:\s*([^\r\n;,]*)/g;
const HEADER_WORDS = new Set([...SECRET_WORDS, 'auth']);

/** Why a header line inside a value carries a credential: a secret-named header whose value ends in something token-shaped. */
function headerCredential(value: string): string | undefined {
  for (const m of value.matchAll(HEADER_LINE)) {
    if (!secretShapedName(m[1], HEADER_WORDS)) continue;
    // The credential is the last word (after a scheme such as `Token`); a few words of prose are not one.
    const last = m[2].trim().split(/\s+/).pop() ?? '';
    if (last.length >= 8 && credentialShaped(last)) return `sets the ${m[1]} header to a value (a credential)`;
  }
  return undefined;
}
// `name=value` at the start of a value or after a separator: `--token=…`, `password=…` in a DSN.
const ASSIGNMENT = /(?:^|[\s&;?#,])-{0,2}([A-Za-z][A-Za-z0-9_.-]*)=([^\s&;#,]*)/g;
// Every pattern above starts at a fixed prefix or a separator, so each runs in linear time; the
// one place that might not (a long run after `Bearer`) is bounded by this cap. Fields hold at most
// a few thousand characters, so a longer string is refused by its schema whatever it holds.
const MAX_SCANNED = 16_384;

/** The URLs in a text, found from each `://` (linear: no pattern tries every start position). */
function urlsIn(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', from)) {
    let start = at;
    while (start > from && /[A-Za-z0-9+.-]/.test(text[start - 1])) start--;
    let end = at + 3;
    while (end < text.length && !/[\s"'<>]/.test(text[end])) end++;
    // The next URL starts after this one (one nested in its parameters is checked with them).
    from = end;
    if (start < at && /[A-Za-z]/.test(text[start])) out.push(text.slice(start, end));
  }
  return out;
}

// `Basic <base64>` (an Authorization header in an argument): a credential when the base64 decodes to
// printable `user:password`, which "Basic authentication" in prose never does.
const BASIC = /(?:^|[^A-Za-z0-9])Basic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/gi;

function basicCredentialIn(value: string): boolean {
  for (const m of value.matchAll(BASIC)) {
    const decoded = Buffer.from(m[1], 'base64').toString('latin1');
    if (/^[\x20-\x7e]+$/.test(decoded) && decoded.indexOf(':') > 0) return true;
  }
  return false;
}

/** Why a string value carries a credential, or undefined. */
function credentialIn(value: string): string | undefined {
  if (value.length > MAX_SCANNED) return undefined;
  for (const [what, shape] of KNOWN_TOKENS) if (shape.test(value)) return `holds ${what}`;
  if (basicCredentialIn(value)) return 'holds a basic credential (user:password in base64)';
  for (const url of urlsIn(value)) {
    const why = urlCredential(url);
    if (why) return why;
  }
  for (const m of value.matchAll(ASSIGNMENT)) {
    if (secretShapedName(m[1]) && !harmlessValue(m[2])) return `sets ${m[1]} to a value (a credential)`;
  }
  return headerCredential(value) ?? commandLineCredential(value);
}

/** A credential a URL carries: a password in its user info, or a secret-named query or fragment parameter. */
function urlCredential(text: string, nested = true): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not parseable as a whole: still look for `user:password@` right after the scheme.
    return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/.test(text) ? 'is a URL with a password in its user info' : undefined;
  }
  if (url.password) return 'is a URL with a password in its user info';
  const params = [...new URLSearchParams(url.search)];
  const fragment = url.hash.slice(1);
  if (fragment.includes('=')) params.push(...new URLSearchParams(fragment.replace(/^[^?=&]*\?/, '')));
  for (const [name, v] of params) {
    if (secretShapedName(name, URL_PARAM_WORDS) && !harmlessValue(v)) return `is a URL whose parameter "${name}" carries a credential`;
    // A URL passed as a parameter (`?redirect=https://u:pw@…`) is looked into once more.
    if (nested && v.includes('://')) {
      for (const inner of urlsIn(v)) {
        const why = urlCredential(inner, false);
        if (why) return why;
      }
    }
  }
  return undefined;
}

/** Every secret-shaped field or value anywhere in a payload, with its pointer. */
export function findSecrets(value: unknown, pointer = '', program = ''): ProblemDetail[] {
  const out: ProblemDetail[] = [];
  const refuse = (at: string, why: string) =>
    out.push({ pointer: at, message: `${why}; Toolgate never stores credentials (pass them to an MCP server through env names)`, code: 'secret_field' });
  if (typeof value === 'string') {
    const why = credentialIn(value);
    if (why) refuse(pointer, why);
  } else if (Array.isArray(value)) {
    // Arguments of a program whose `-p` is a password: the transport's command, or a word before (`docker run … mysql`).
    let passwordP = PASSWORD_P_PROGRAMS.has(programOf(program));
    let spacedP = SPACED_P_PROGRAMS.has(programOf(program));
    value.forEach((v, i) => {
      const here = `${pointer}/${i}`;
      const before = out.length;
      out.push(...findSecrets(v, here));
      if (typeof v === 'string' && PASSWORD_P_PROGRAMS.has(programOf(v))) passwordP = true;
      if (typeof v === 'string' && SPACED_P_PROGRAMS.has(programOf(v))) spacedP = true;
      // `--password X` as two arguments: the credential is the one after the flag.
      const next = value[i + 1];
      const flag = typeof v === 'string' ? FLAG_ONLY.exec(v) : null;
      if (out.length === before && flag && typeof next === 'string' && !next.startsWith('-') && secretShapedName(flag[1]) && !harmlessValue(next)) {
        refuse(`${pointer}/${i + 1}`, `follows ${v}, so it is a credential`);
      } else if (out.length === before && spacedP && v === '-p' && typeof next === 'string' && !next.startsWith('-') && passwordAfterP(next)) {
        refuse(`${pointer}/${i + 1}`, 'follows -p, so it is a password');
      } else if (out.length === before && typeof v === 'string' && joinedPassword(v, passwordP)) {
        refuse(here, 'is -p<password>: a password');
      }
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const here = `${pointer}/${escapePointer(k)}`;
      if (SECRET_NAME.test(k)) {
        out.push({
          pointer: here,
          message: `"${k}" is a secret-shaped field; Toolgate never stores credentials (use an opaque connectionId)`,
          code: 'secret_field',
        });
      } else {
        // A transport's `args` are read knowing its `command` (whose `-p` may be a password).
        const command = (value as { command?: unknown }).command;
        out.push(...findSecrets(v, here, k === 'args' && typeof command === 'string' ? command : ''));
      }
    }
  }
  return dedupe(out);
}

function dedupe(problems: ProblemDetail[]): ProblemDetail[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.pointer) && seen.add(p.pointer) !== undefined);
}
