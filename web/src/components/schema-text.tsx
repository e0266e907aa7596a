/** A schema description, with its `backticked` parts shown as code. */
export function SchemaText({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}</>;
}
