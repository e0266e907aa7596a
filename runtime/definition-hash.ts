import { sha256Canonical } from './sha256.ts';

/** The part of a tool's definition an admin approves: what the model is shown. */
export type ToolDefinition = {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
};

/**
 * sha-256 of the canonical definition, the pin carried into bundles.
 * For an MCP tool `name` is the server's original tool name, so a runtime can hash what a live
 * server offers and compare it with the pin.
 */
export function definitionHash(def: ToolDefinition): string {
  const canonical: Record<string, unknown> = {
    name: def.name,
    description: def.description ?? '',
    inputSchema: def.inputSchema,
  };
  if (def.outputSchema !== undefined) canonical.outputSchema = def.outputSchema;
  return sha256Canonical(canonical);
}
