export type BadgeTone = 'ok' | 'warn' | 'bad' | 'muted' | 'info';

export function Badge({ tone, children }: { tone: BadgeTone; children: React.ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}
