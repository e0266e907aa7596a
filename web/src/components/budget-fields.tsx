import { useId } from 'react';
import type { Budgets } from '../../../policy-schemas/types.gen.ts';
import { limits } from '../lib/schema.ts';

/** Max runtime and result size, with the schema's limits; empty fields are left out. */
export function BudgetFields({ value, onChange, legend = 'Budgets' }: { value: Budgets | undefined; onChange: (b: Budgets | undefined) => void; legend?: string }) {
  const ids = useId();
  const setNum = (key: 'maxRuntimeMs' | 'maxResultBytes', raw: string) => {
    const next = { ...(value ?? {}) };
    if (raw === '') delete next[key];
    else next[key] = Number(raw);
    onChange(Object.keys(next).length ? next : undefined);
  };
  return (
    <fieldset className="section">
      <legend>{legend}</legend>
      <div className="field">
        <label htmlFor={`${ids}-rt`}>Max runtime (ms)</label>
        <input
          id={`${ids}-rt`}
          type="number"
          min={limits.maxRuntimeMs.minimum}
          max={limits.maxRuntimeMs.maximum}
          value={value?.maxRuntimeMs ?? ''}
          onChange={(e) => setNum('maxRuntimeMs', e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${ids}-rb`}>Max result size (bytes)</label>
        <input
          id={`${ids}-rb`}
          type="number"
          min={limits.maxResultBytes.minimum}
          max={limits.maxResultBytes.maximum}
          value={value?.maxResultBytes ?? ''}
          onChange={(e) => setNum('maxResultBytes', e.target.value)}
        />
      </div>
    </fieldset>
  );
}

