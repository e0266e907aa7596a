import type { AuditEvent } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { isPerson } from './events.ts';

export const CSV_COLUMNS = [
  'seq',
  'at',
  'actor',
  'action',
  'entityType',
  'entityId',
  'tenant',
  'before',
  'after',
  'reason',
  'requestId',
  'prevHash',
  'hash',
  'actorEmail',
  'actorName',
] as const;

/** One JSONL line: the event as canonical JSON, so re-hashing it needs no reformatting. */
export function toJsonl(e: AuditEvent): string {
  return `${canonicalJson(e)}\n`;
}

/**
 * One RFC 4180 CSV row. `before`/`after` hold canonical JSON; an absent value (null) is an
 * empty cell, and an empty string is written as `""` so the two stay distinguishable.
 */
export function toCsvRow(e: AuditEvent): string {
  return `${CSV_COLUMNS.map((k) => {
    const v = e[k];
    if (v === null || v === undefined) return '';
    return csvCell(k === 'before' || k === 'after' ? canonicalJson(v) : String(v));
  }).join(',')}\r\n`;
}

/** One quoted RFC 4180 cell, made safe to open in a spreadsheet. */
export function csvCell(text: string): string {
  return `"${spreadsheetSafe(text).replace(/"/g, '""')}"`;
}

// A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR) gets a leading apostrophe, and
// so does one that already starts with an apostrophe, so reading drops exactly one and the chain
// still verifies from the CSV.
const FORMULA_START = /^['=+\-@\t\r]/;
function spreadsheetSafe(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}
function fromSpreadsheetSafe(text: string): string {
  return text.startsWith("'") ? text.slice(1) : text;
}

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

/** Parses one export line (JSONL) or CSV record back into an event. */
export function fromCsvRecord(cells: (string | null)[]): AuditEvent {
  const get = (k: (typeof CSV_COLUMNS)[number]) => {
    const cell = cells[CSV_COLUMNS.indexOf(k)] ?? null;
    return cell === null ? null : fromSpreadsheetSafe(cell);
  };
  const json = (v: string | null) => (v === null ? null : JSON.parse(v));
  return {
    seq: Number(get('seq')),
    at: get('at') ?? '',
    actor: get('actor') ?? '',
    action: get('action') as AuditEvent['action'],
    entityType: get('entityType') as AuditEvent['entityType'],
    entityId: get('entityId') ?? '',
    tenant: get('tenant'),
    before: json(get('before')),
    after: json(get('after')),
    reason: get('reason'),
    requestId: get('requestId'),
    prevHash: get('prevHash') ?? '',
    hash: get('hash') ?? '',
    // The person columns come last, so a reader of older exports finds every other column in place.
    ...(isPerson(get('actor') ?? '') ? { actorEmail: get('actorEmail'), actorName: get('actorName') } : {}),
  };
}

/**
 * Splits CSV text into records; a quoted cell is a string, an unquoted empty cell is null.
 * Streams record by record so a large export is verified in constant memory.
 */
export function* parseCsv(text: string): Generator<(string | null)[]> {
  let i = 0;
  const n = text.length;
  while (i < n) {
    const row: (string | null)[] = [];
    for (;;) {
      if (text[i] === '"') {
        let value = '';
        i++;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) throw new Error('unterminated quoted cell');
          value += text.slice(i, q);
          if (text[q + 1] === '"') {
            value += '"';
            i = q + 2;
          } else {
            i = q + 1;
            break;
          }
        }
        row.push(value);
      } else {
        let j = i;
        while (j < n && text[j] !== ',' && text[j] !== '\r' && text[j] !== '\n') j++;
        const raw = text.slice(i, j);
        row.push(raw === '' ? null : raw);
        i = j;
      }
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') i++;
      break;
    }
    yield row;
  }
}

/** The format named by the first line of a partial (filtered) export. */
export const EXPORT_FORMAT = 'toolgate.audit-export/v1';
const PARTIAL_WORDS = 'partial export: only the events matching the filter';

/**
 * The first line of an export narrowed by a filter: it holds some events of the chain, not the
 * chain, so `audit verify` must report it as partial rather than as a chain with events missing.
 * JSONL: one JSON object (never an event: it has no `seq`); CSV: one quoted cell before the header.
 */
export function partialExportLine(filter: Record<string, unknown>, format: 'jsonl' | 'csv'): string {
  const sorted = JSON.parse(canonicalJson(filter)) as Record<string, unknown>;
  if (format === 'jsonl') return `${canonicalJson({ format: EXPORT_FORMAT, partial: true, filter: sorted })}\n`;
  return `${csvCell(`${PARTIAL_WORDS} ${canonicalJson(sorted)}`)}\r\n`;
}

/** The filter a partial export's first line names (JSONL line or CSV record), or undefined when it is not that line. */
export function partialExportFilter(first: string | (string | null)[]): Record<string, unknown> | undefined {
  if (Array.isArray(first)) {
    const cell = first.length === 1 ? first[0] : null;
    if (!cell?.startsWith(PARTIAL_WORDS)) return undefined;
    try {
      return JSON.parse(cell.slice(PARTIAL_WORDS.length + 1)) as Record<string, unknown>;
    } catch {
      return {};
    }
  }
  let doc: unknown;
  try {
    doc = JSON.parse(first);
  } catch {
    return undefined;
  }
  const d = doc as { format?: unknown; partial?: unknown; filter?: unknown };
  if (d === null || typeof d !== 'object' || d.format !== EXPORT_FORMAT || d.partial !== true) return undefined;
  return d.filter !== null && typeof d.filter === 'object' ? (d.filter as Record<string, unknown>) : {};
}
