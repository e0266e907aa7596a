import { escapePointer } from '../../policy-schemas/index.ts';
import type { ProblemDetail } from '../errors.ts';

// Field names that carry credentials. Toolgate stores connection IDs, never what they unlock.
const SECRET_NAME = /token|secret|passw(?:or)?d|passphrase|api[_-]?key|authorization|private[_-]?key|credential|bearer|cookie|access[_-]?key|signing[_-]?key/i;
// Values that look like a credential even under an innocent name.
const SECRET_VALUE =
  /-----BEGIN [A-Z ]*PRIVATE KEY-----|^(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}|^sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|^xai-[A-Za-z0-9]{20,}|^AIza[0-9A-Za-z_-]{30,}|^glpat-[A-Za-z0-9_-]{20,}|^gh[pousr]_[A-Za-z0-9]{20,}|^xox[abpr]-|^AKIA[0-9A-Z]{16}$|^Bearer\s+\S{8,}|^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./;

/** Every secret-shaped field or value anywhere in a payload, with its pointer. */
export function findSecrets(value: unknown, pointer = ''): ProblemDetail[] {
  const out: ProblemDetail[] = [];
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value)) out.push({ pointer, message: 'looks like a credential; Toolgate never stores credentials', code: 'secret_field' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => out.push(...findSecrets(v, `${pointer}/${i}`)));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const here = `${pointer}/${escapePointer(k)}`;
      if (SECRET_NAME.test(k)) {
        out.push({
          pointer: here,
          message: `"${k}" is a secret-shaped field; Toolgate never stores credentials (use an opaque connectionId)`,
          code: 'secret_field',
        });
      } else {
        out.push(...findSecrets(v, here));
      }
    }
  }
  return out;
}
