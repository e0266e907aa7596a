import { ApiError } from '../errors.ts';

// C0 controls but tab and line feed (a reason typed in a text area), DEL, C1 controls (ESC [ in
// one byte), and the bidirectional overrides that make text read differently than it is stored.
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Refuses a reason that carries control characters: NUL, ANSI escape sequences and the like would
 * be stored in the audit log forever and replayed into terminals, logs and CSV viewers.
 */
export function checkReasonText(reason: string, pointer: string): void {
  const m = FORBIDDEN.exec(reason);
  if (!m) return;
  const code = m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  throw new ApiError(400, 'validation', `The reason contains the control character U+${code} at position ${m.index}; send plain text`, {
    errors: [{ pointer, message: `must not contain control characters (found U+${code} at position ${m.index})` }],
  });
}
