import type { Budgets } from '../../../policy-schemas/types.gen.ts';
import { limits } from '../lib/schema.ts';
import { TextField } from './text-field.tsx';

/** Max runtime and result size, with the schema's limits; empty fields are left out. */
export function BudgetFields({
  value,
  onChange,
  legend = 'Budgets',
}: {
  value: Budgets | undefined;
  onChange: (b: Budgets | undefined) => void;
  legend?: string;
}) {
  const setNum = (key: 'maxRuntimeMs' | 'maxResultBytes', raw: string) => {
    const next = { ...(value ?? {}) };
    if (raw === '') delete next[key];
    else next[key] = Number(raw);
    onChange(Object.keys(next).length ? next : undefined);
  };
  return (
    <fieldset className="section">
      <legend>{legend}</legend>
      <TextField
        label="Max runtime (ms)"
        type="number"
        min={limits.maxRuntimeMs.minimum}
        max={limits.maxRuntimeMs.maximum}
        value={value?.maxRuntimeMs ?? ''}
        onChange={(v) => setNum('maxRuntimeMs', v)}
      />
      <TextField
        label="Max result size (bytes)"
        type="number"
        min={limits.maxResultBytes.minimum}
        max={limits.maxResultBytes.maximum}
        value={value?.maxResultBytes ?? ''}
        onChange={(v) => setNum('maxResultBytes', v)}
      />
    </fieldset>
  );
}
