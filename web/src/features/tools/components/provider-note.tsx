import { useId, useMemo } from 'react';
import { ENCODER_LABELS, type EncoderFit, WIRE_ENCODERS, describeFit, providerCompatibility } from '../../../../../runtime/provider-compatibility.ts';
import { Badge } from '../../../components/badge.tsx';

/** The tools list's column: one badge per wire encoder, green when it carries the input schema unchanged. */
export function ProviderBadges({ inputSchema }: { inputSchema: unknown }) {
  const fits = useMemo(() => providerCompatibility(inputSchema), [inputSchema]);
  return (
    <span className="badges">
      {WIRE_ENCODERS.map((e) => (
        <span key={e} title={`${ENCODER_LABELS[e]}: ${describeFit(fits[e])}`}>
          <Badge tone={fits[e].carried ? 'ok' : 'warn'}>
            {ENCODER_LABELS[e]}
            <span aria-hidden="true">{fits[e].carried ? ' ✓' : ' ✗'}</span>
            <span className="sr-only">{fits[e].carried ? ': carried unchanged' : `: ${describeFit(fits[e])}`}</span>
          </Badge>
        </span>
      ))}
    </span>
  );
}

/** A tool page's section: for each wire encoder, carried unchanged or every place the schema stops it. */
export function ProviderNote({ inputSchema }: { inputSchema: unknown }) {
  const fits = useMemo(() => providerCompatibility(inputSchema), [inputSchema]);
  const heading = useId();
  return (
    <section className="section" aria-labelledby={heading}>
      <h2 id={heading}>Model providers</h2>
      <p className="hint">
        Which wire encoders give a model this input schema unchanged. Where one stops, that provider's API refuses the tool as it is (OpenAI strict mode accepts
        a documented subset of JSON Schema).
      </p>
      <dl className="meta">
        {WIRE_ENCODERS.map((e) => (
          <Fit key={e} label={ENCODER_LABELS[e]} fit={fits[e]} />
        ))}
      </dl>
    </section>
  );
}

function Fit({ label, fit }: { label: string; fit: EncoderFit }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {fit.carried ? (
          <Badge tone="ok">carried unchanged</Badge>
        ) : (
          <>
            <Badge tone="warn">stopped</Badge>
            <ul>
              {fit.stops.map((s) => (
                <li key={`${s.pointer} ${s.message}`}>
                  <code>{s.pointer}</code>: {s.message}
                </li>
              ))}
            </ul>
          </>
        )}
      </dd>
    </>
  );
}
