/** A refusal from the server: its status and problem+json (code, detail, one error per pointer). */
export class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly problem: { code?: string; detail?: string; errors?: { pointer: string; message: string }[] },
  ) {
    super(`${status}${problem.code ? ` ${problem.code}` : ''}: ${problem.detail ?? 'no detail'}`);
    this.name = 'ServerRefusal';
  }

  /** The refusal as lines a person reads: what the server said, then each pointer. */
  lines(): string[] {
    return [this.message, ...(this.problem.errors ?? []).map((e) => `  ${e.pointer || '/'}: ${e.message}`)];
  }
}

export type ApiClient = ReturnType<typeof createApiClient>;
export type ClientOptions = { url: string; token: string; reason?: string; fetch?: typeof fetch };

/** Where and as whom the CLI talks to the API: TOOLGATE_URL and TOOLGATE_TOKEN. */
export function clientOptionsFromEnv(env: NodeJS.ProcessEnv): ClientOptions | string {
  const url = env.TOOLGATE_URL?.trim();
  const token = env.TOOLGATE_TOKEN?.trim();
  if (!url) return 'TOOLGATE_URL is not set (the server, e.g. http://127.0.0.1:8787)';
  if (!/^https?:\/\//.test(url)) return `TOOLGATE_URL must start with http:// or https://, not ${url}`;
  if (!token) return 'TOOLGATE_TOKEN is not set (an API token; apply needs an admin token)';
  return { url: url.replace(/\/+$/, ''), token };
}

/**
 * The few calls export and apply make, each with the token, JSON bodies, `If-Match` when a
 * version is given and the reason in `Toolgate-Reason`. Any non-2xx answer throws ServerRefusal.
 */
export function createApiClient(o: ClientOptions) {
  const doFetch = o.fetch ?? fetch;
  const send = async (method: string, path: string, body?: unknown, version?: number): Promise<{ json: unknown; etag: string | null }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${o.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (version !== undefined) headers['if-match'] = `"${version}"`;
    // Header values are ASCII, and the server percent-decodes the reason: encode anything else, and any `%`.
    if (o.reason && method !== 'GET') headers['toolgate-reason'] = /^[\x20-\x24\x26-\x7e]*$/.test(o.reason) ? o.reason : encodeURIComponent(o.reason);
    let res: Response;
    try {
      res = await doFetch(o.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new Error(`cannot reach ${o.url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok)
      throw new ServerRefusal(
        res.status,
        (json && typeof json === 'object' ? json : { detail: text.slice(0, 300) || res.statusText }) as ServerRefusal['problem'],
      );
    return { json, etag: res.headers.get('etag') };
  };
  const path = (...parts: string[]) => parts.map(encodeURIComponent).join('/');

  return {
    url: o.url,
    path,
    get: (p: string) => send('GET', p).then((r) => r.json as Record<string, unknown>),
    /** Every item of a list, following `next` links when the server pages its answer. */
    async list(p: string): Promise<Record<string, unknown>[]> {
      const items: Record<string, unknown>[] = [];
      let next: string | undefined = p;
      let total: number | undefined;
      for (let guard = 0; next && guard < 100_000; guard++) {
        const page = (await send('GET', next)).json as { items: Record<string, unknown>[]; next?: string | null; nextCursor?: string | null; total?: number };
        items.push(...page.items);
        if (typeof page.total === 'number') total = page.total;
        if (typeof page.next === 'string' && page.next.startsWith('/')) next = page.next;
        else if (typeof page.nextCursor === 'string' && page.nextCursor)
          next = `${p}${p.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(page.nextCursor)}`;
        else next = undefined;
      }
      // A partial read would export too little and plan creates of what exists: refuse instead.
      if (total !== undefined && items.length < total) throw new Error(`${p} answered ${items.length} of ${total} items and no link to the rest`);
      return items;
    },
    post: (p: string, body: unknown) => send('POST', p, body),
    put: (p: string, body: unknown, version: number) => send('PUT', p, body, version),
    delete: (p: string, version: number) => send('DELETE', p, undefined, version),
  };
}
