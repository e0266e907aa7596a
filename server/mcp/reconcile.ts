import { definitionHash } from '../../runtime/definition-hash.ts';
import { validate } from '../../policy-schemas/index.ts';
import type { McpDefinition, Tool } from '../../policy-schemas/types.gen.ts';
import type { OfferedTool } from './client.ts';
import { placeToolIds } from './tool-ids.ts';

/** A problem found in an offered input schema (a JSON pointer into it and why). */
export type SchemaFlag = { pointer: string; message: string };

export type ReconcileInput = {
  serverId: string;
  offered: OfferedTool[];
  /** The inventory (at least every tool whose id starts with `mcp__<server>__`). */
  existing: Tool[];
  now: string;
  /** Judges an input schema by the schema dialect (what DESIGN keeps refused); an empty list means it fits. */
  checkInputSchema: (schema: Record<string, unknown>) => SchemaFlag[];
};

/** One tool to write: `before` is null for a new tool. */
export type ToolChange = { before: Tool | null; after: Tool };

export type ReconcileResult = {
  changes: ToolChange[];
  added: string[];
  changed: string[];
  removed: string[];
  rejected: Array<{ name: string; message: string }>;
  /** Imported (quarantined) tools whose input schema holds something the dialect refuses. */
  flagged: Array<{ id: string; problems: SchemaFlag[] }>;
};

/**
 * Compares what an MCP server offers with the inventory and says what to write. Pure.
 * New tools arrive quarantined under the id `placeToolIds` gives their name; a definition that
 * differs from the approved one goes back to quarantine with both kept for review; vanished tools
 * are marked removed; a name that can take no id is rejected, never imported over another tool.
 * Admin edits (groups, effect, redaction…) survive.
 */
export function reconcileTools(input: ReconcileInput): ReconcileResult {
  const { serverId, now } = input;
  const result: ReconcileResult = { changes: [], added: [], changed: [], removed: [], rejected: [], flagged: [] };
  const byId = new Map(input.existing.map((t) => [t.id, t]));
  const offeredIds = new Set<string>();

  // The id each name was imported under before: it keeps it (removed tools included, should they come back).
  const heldBy = new Map<string, string>();
  for (const t of input.existing) {
    if (t.source?.kind === 'mcp' && t.source.server === serverId && t.source.originalName !== undefined && !heldBy.has(t.source.originalName))
      heldBy.set(t.source.originalName, t.id);
  }
  const seenNames = new Set<string>();
  const unique: OfferedTool[] = [];
  for (const offer of input.offered) {
    if (seenNames.has(offer.name)) result.rejected.push({ name: offer.name, message: 'the server offers this name more than once' });
    else if (offer.name === '') result.rejected.push({ name: offer.name, message: 'the name is empty' });
    else {
      seenNames.add(offer.name);
      unique.push(offer);
    }
  }
  const placed = placeToolIds(
    serverId,
    unique.map((o) => ({ name: o.name, heldBy: heldBy.get(o.name) })),
    new Set(byId.keys()),
  );

  for (const [i, offer] of unique.entries()) {
    const place = placed[i];
    if (place.id === undefined) {
      result.rejected.push({ name: offer.name, message: place.problem });
      continue;
    }
    const id = place.id;
    const current = toDefinition(offer);
    const existing = byId.get(id);
    if (existing && !(existing.source?.kind === 'mcp' && existing.source.server === serverId)) {
      result.rejected.push({ name: offer.name, message: `the tool id ${id} is already used by a tool that was not imported from this server` });
      continue;
    }
    const candidate = existing ? withHints(updated(existing, current, now), existing, offer) : created(id, serverId, offer, current, now);
    if (candidate === existing) {
      offeredIds.add(id);
      continue;
    }
    const invalid = validate<Tool>('tool', structuredClone(candidate));
    if (!invalid.ok) {
      result.rejected.push({
        name: offer.name,
        message: `the definition cannot be stored: ${invalid.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}`,
      });
      if (existing) {
        offeredIds.add(id);
        // The server changed what an admin approved: quarantined, the old definition kept.
        const held = unstorable(existing, current, invalid.errors, now);
        if (held !== existing) {
          result.changes.push({ before: existing, after: held });
          result.changed.push(id);
        }
      }
      continue;
    }
    offeredIds.add(id);
    const problems = input.checkInputSchema(current.inputSchema);
    if (problems.length > 0) {
      result.flagged.push({ id, problems });
      if (candidate.review) candidate.review.problems = problems.map(({ pointer, message }) => ({ pointer, message }));
    }
    result.changes.push({ before: existing ?? null, after: candidate });
    if (!existing || existing.status === 'removed') result.added.push(id);
    else result.changed.push(id);
  }

  for (const tool of input.existing) {
    if (tool.source?.kind !== 'mcp' || tool.source.server !== serverId) continue;
    if (offeredIds.has(tool.id) || tool.status === 'removed') continue;
    result.changes.push({ before: tool, after: { ...tool, status: 'removed' } });
    result.removed.push(tool.id);
  }
  return result;
}

function toDefinition(offer: OfferedTool): McpDefinition {
  const def: McpDefinition = { name: offer.name, inputSchema: offer.inputSchema, definitionHash: '' };
  if (offer.description !== undefined) def.description = offer.description;
  if (offer.outputSchema !== undefined) def.outputSchema = offer.outputSchema;
  def.definitionHash = definitionHash({ name: offer.name, description: offer.description, inputSchema: offer.inputSchema, outputSchema: offer.outputSchema });
  return def;
}

/** The definition a stored imported tool currently carries. */
function storedDefinition(tool: Tool): McpDefinition {
  const name = tool.source?.originalName ?? tool.id;
  const inputSchema = tool.inputSchema as Record<string, unknown>;
  const outputSchema = tool.outputSchema as Record<string, unknown> | undefined;
  const def: McpDefinition = { name, description: tool.description, inputSchema, definitionHash: '' };
  if (outputSchema !== undefined) def.outputSchema = outputSchema;
  def.definitionHash = tool.definitionHash ?? definitionHash({ name, description: tool.description, inputSchema, outputSchema });
  return def;
}

function created(id: string, serverId: string, offer: OfferedTool, def: McpDefinition, now: string): Tool {
  const tool: Tool = {
    id,
    description: def.description ?? '',
    inputSchema: def.inputSchema,
    // Annotations are the server's claims: an imported tool is assumed to act on the world until
    // an admin who read them says otherwise when approving.
    effect: 'external_side_effect',
    groups: ['default'],
    status: 'quarantined',
    source: { kind: 'mcp', server: serverId, originalName: offer.name, ...(offer.annotations ? { hints: { ...offer.annotations } } : {}) },
    definitionHash: def.definitionHash,
    review: { current: def, detectedAt: now },
  };
  if (def.outputSchema !== undefined) tool.outputSchema = def.outputSchema;
  return tool;
}

/** The tool after this sync, or the very same object when nothing is to change. */
function updated(existing: Tool, def: McpDefinition, now: string): Tool {
  const approved = existing.source?.approvedDefinitionHash;
  const status = existing.status ?? 'active';
  if (status === 'quarantined') {
    if (existing.definitionHash === def.definitionHash) return existing;
    const review: NonNullable<Tool['review']> = { current: def, detectedAt: now };
    if (existing.review?.previous) review.previous = existing.review.previous;
    return withDefinition(existing, def, review);
  }
  if (status === 'active' || status === 'disabled') {
    if (approved === def.definitionHash && existing.definitionHash === def.definitionHash) return existing;
    const review: NonNullable<Tool['review']> = { current: def, detectedAt: now };
    // What the tool carries while active or disabled is what the admin approved.
    if (approved !== undefined) review.previous = storedDefinition(existing);
    return withDefinition(existing, def, review);
  }
  // A removed tool that comes back is reviewed again, whatever it was before.
  const review: NonNullable<Tool['review']> = { current: def, detectedAt: now };
  if (approved !== undefined && existing.definitionHash === approved) review.previous = storedDefinition(existing);
  return withDefinition(existing, def, review);
}

/**
 * An imported tool whose server now offers a definition the inventory cannot hold: quarantined,
 * stored fields unchanged, the offered hash and definition kept for review with why.
 */
function unstorable(existing: Tool, def: McpDefinition, errors: SchemaFlag[], now: string): Tool {
  const status = existing.status ?? 'active';
  if (status === 'quarantined' && existing.definitionHash === def.definitionHash) return existing;
  const approved = existing.source?.approvedDefinitionHash;
  const review: NonNullable<Tool['review']> = {
    current: def,
    detectedAt: now,
    problems: errors.map((e) => ({ pointer: e.pointer || '/', message: `${e.message} (the offered definition cannot be stored)` })),
  };
  if (status === 'quarantined' && existing.review?.previous) review.previous = existing.review.previous;
  else if (status !== 'quarantined' && status !== 'removed' && approved !== undefined) review.previous = storedDefinition(existing);
  return { ...existing, status: 'quarantined', definitionHash: def.definitionHash, review };
}

/** A changed tool carries the hints its server gives now; an unchanged one stays the very same object. */
function withHints(next: Tool, existing: Tool, offer: OfferedTool): Tool {
  if (next === existing || !next.source) return next;
  const source = { ...next.source };
  if (offer.annotations) source.hints = { ...offer.annotations };
  else delete source.hints;
  return { ...next, source };
}

function withDefinition(existing: Tool, def: McpDefinition, review: NonNullable<Tool['review']>): Tool {
  const next: Tool = {
    ...existing,
    description: def.description ?? '',
    inputSchema: def.inputSchema,
    status: 'quarantined',
    definitionHash: def.definitionHash,
    review,
  };
  if (def.outputSchema !== undefined) next.outputSchema = def.outputSchema;
  else delete next.outputSchema;
  return next;
}
