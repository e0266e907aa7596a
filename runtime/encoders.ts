import type { ToolView } from './decide.ts';

/** An OpenAI Chat Completions `tools` entry. */
export type OpenAITool = { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } };

/** An Anthropic Messages `tools` entry. */
export type AnthropicTool = { name: string; description: string; input_schema: Record<string, unknown> };

/** The view's visible tools in OpenAI's `tools` wire format, ordered by id. */
export function toOpenAITools(view: ToolView): OpenAITool[] {
  return visibleDefs(view).map((t) => ({
    type: 'function',
    function: { name: t.id, description: t.description, parameters: structuredClone(t.inputSchema) },
  }));
}

/** The view's visible tools in Anthropic's `tools` wire format, ordered by id. */
export function toAnthropicTools(view: ToolView): AnthropicTool[] {
  return visibleDefs(view).map((t) => ({ name: t.id, description: t.description, input_schema: structuredClone(t.inputSchema) }));
}

function visibleDefs(view: ToolView) {
  return view.result.tools.map((e) => {
    const def = view.loaded.byId.get(e.id)?.def;
    if (!def) throw new Error(`visible tool ${e.id} has no definition`);
    return def;
  });
}
