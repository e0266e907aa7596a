// One cold measurement in a process of its own (started by bundle-format.bench.ts with
// --expose-gc): JSON.parse of a bundle's bytes, or verifyBundle (signature, canonical form, schema,
// revision, load, conformance vectors) of the same bytes; wall time and the heap the result holds.
// With `verify`, also the first decide on a tool (which compiles its input schema) and the second.
// With `steps`, verifyBundle's steps one by one, cold, each its CPU time (where the time goes).
// Prints one JSON line: wall and CPU milliseconds, heap bytes held.
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { validatorFor } from '../../policy-schemas/index.ts';
import { BUNDLE_JWS_TYP, canonicalBundleContentParts } from '../../runtime/bundle-format.ts';
import { conformanceFailures, runtimeSubject } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { parseDetachedJws, parseSignedJson } from '../../runtime/detached-jws.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';

const [mode, bundleFile, signatureFile, jwksFile, tenant, now] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const bytes = readFileSync(bundleFile);
const signature = readFileSync(signatureFile, 'utf8');
const trustedKeys = JSON.parse(readFileSync(jwksFile, 'utf8'));
const held: unknown[] = [];

if (mode === 'steps') {
  console.log(JSON.stringify(verifySteps()));
  process.exit(0);
}

gc();
const heapBefore = process.memoryUsage().heapUsed;
const start = process.hrtime.bigint();
const cpuStart = process.cpuUsage();
let result: unknown;
if (mode === 'parse') result = JSON.parse(new TextDecoder().decode(bytes));
else result = await verifyBundle(bytes, signature, { trustedKeys, tenant, now: new Date(now) });
const ms = Number(process.hrtime.bigint() - start) / 1e6;
const cpu = process.cpuUsage(cpuStart);
// CPU time is steadier than wall time on a shared machine (it includes the collector's threads).
const cpuMs = (cpu.user + cpu.system) / 1000;
held.push(result);
gc();
const heap = process.memoryUsage().heapUsed - heapBefore;

const out: Record<string, unknown> = { mode, ms, cpuMs, heap };
if (mode === 'verify') {
  const r = result as Awaited<ReturnType<typeof verifyBundle>>;
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  // The first call on a tool pays for compiling its input schema; the second does not.
  const view = createView(r.loaded, { subject: 'agent:a0', groups: ['*'], facts: { hostSession: 'ready' }, at: now });
  const visible = view.result.tools.map((t) => t.id);
  const timeDecide = (id: string) => {
    const t0 = process.hrtime.bigint();
    const d = decide(view, { toolCallId: 'c', name: id, arguments: '{}' });
    if (d.errorCode === 'unavailable' || d.errorCode === 'policy_denied') throw new Error(`${id} not callable`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const picks = [visible[Math.floor(visible.length / 3)], visible[Math.floor((2 * visible.length) / 3)], visible[visible.length - 1]];
  out.firstDecideMs = picks.map(timeDecide);
  out.secondDecideMs = picks.map(timeDecide);
}
console.log(JSON.stringify(out));

/** verifyBundle's steps in its order, each timed alone (CPU ms); throws where verifyBundle would refuse. */
function verifySteps(): Record<string, number> {
  const out: Record<string, number> = {};
  let mark = process.cpuUsage();
  const step = (name: string) => {
    const d = process.cpuUsage(mark);
    out[name] = (d.user + d.system) / 1000;
    mark = process.cpuUsage();
  };
  const header = parseDetachedJws(signature, BUNDLE_JWS_TYP);
  if (!header.ok) throw new Error(header.message);
  const jwk = trustedKeys.keys.find((k: { kid: string }) => k.kid === header.kid);
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  const signingInput = Buffer.from(`${header.protectedB64}.${bytes.toString('base64url')}`, 'latin1');
  if (!verifySignature(null, signingInput, key, Buffer.from(header.signatureB64, 'base64url'))) throw new Error('bad signature');
  step('signature');
  const parsed = parseSignedJson(bytes);
  if (!parsed) throw new Error('not JSON');
  const doc = parsed.doc as Record<string, unknown>;
  step('parse');
  const content = canonicalBundleContentParts(doc, parsed.text);
  if (!content) throw new Error('not canonical');
  step('canonical');
  if (!validatorFor(doc.format === 'toolgate.bundle/v1' ? 'bundle-v1' : 'bundle')(doc)) throw new Error('bundle schema');
  step('schema');
  const hash = createHash('sha256');
  for (const part of content) hash.update(part);
  if (`sha256:${hash.digest('hex')}` !== doc.revision) throw new Error('revision');
  step('revision');
  const bundle = doc as unknown as Parameters<typeof loadBundle>[0];
  const loaded = loadBundle(bundle);
  step('load');
  if (conformanceFailures(bundle.conformance, runtimeSubject(loaded), 1).length > 0) throw new Error('conformance');
  step('conformance');
  return out;
}
