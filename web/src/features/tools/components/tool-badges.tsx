import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { Badge, type BadgeTone } from '../../../components/badge.tsx';

const tone: Record<NonNullable<Tool['status']>, BadgeTone> = { active: 'ok', quarantined: 'warn', disabled: 'muted', removed: 'bad' };

/** Status plus the "no redaction" warning: such a tool never enters a bundle. */
export function ToolBadges({ tool }: { tool: Tool }) {
  const status = tool.status ?? 'active';
  return (
    <span className="badges">
      <Badge tone={tone[status]}>{status}</Badge>
      {!tool.redaction ? <Badge tone="bad">no redaction</Badge> : null}
    </span>
  );
}
