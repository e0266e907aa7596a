// The console also runs this in the browser: no node: modules here.
import { compileLinearPattern } from './linear-regexp.ts';

/**
 * The `format`s an input schema asserts (docs/spec.md, R7.13): each is a whole-string grammar
 * plus, for dates and times, the calendar checks a grammar cannot say. Every other `format`
 * (`int32`, `password`, `binary`, `uri-reference`…) is an annotation and never fails a value.
 * The grammars use only ASCII classes, so any regular-expression engine reads them alike.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
const DURATION =
  /^P(?:(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S))?|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)|\d+W)$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~!$&'()*+,;=:@/?#[\]-]|%[0-9A-Fa-f]{2})*$/;
const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

// Seconds stop at 59: a leap second (23:59:60) is no instant most runtimes can hold.
function isTime(s: string): boolean {
  const m = TIME.exec(s);
  if (!m) return false;
  const [hour, minute, second] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (hour > 23 || minute > 59 || second > 59) return false;
  return m[4] === undefined || (Number(m[4]) <= 23 && Number(m[5]) <= 59);
}

function isDateTime(s: string): boolean {
  const t = s.length > 10 ? s[10] : '';
  return (t === 'T' || t === 't') && isDate(s.slice(0, 10)) && isTime(s.slice(11));
}

function isHostname(s: string): boolean {
  return s.length >= 1 && s.length <= 253 && s.split('.').every((label) => LABEL.test(label));
}

function isEmail(s: string): boolean {
  const at = s.lastIndexOf('@');
  return at > 0 && at <= 64 && EMAIL_LOCAL.test(s.slice(0, at)) && isHostname(s.slice(at + 1));
}

function isIpv6(s: string): boolean {
  let text = s;
  let groupsTaken = 0;
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.includes('.', lastColon)) {
    // A trailing dotted quad stands for the last two groups.
    if (!IPV4.test(text.slice(lastColon + 1))) return false;
    text = `${text.slice(0, lastColon + 1)}0`;
    groupsTaken = 1;
  }
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  if (halves.length === 1) {
    const all = groups(text);
    return all.length === 8 - groupsTaken && all.every((g) => HEX_GROUP.test(g));
  }
  const [head, tail] = [groups(halves[0]), groups(halves[1])];
  return head.length + tail.length <= 7 - groupsTaken && [...head, ...tail].every((g) => HEX_GROUP.test(g));
}

function isPattern(s: string): boolean {
  try {
    compileLinearPattern(s);
    return true;
  } catch {
    return false;
  }
}

/** Asserted format → its test. The order is the spec's. */
export const ASSERTED_FORMATS: Readonly<Record<string, (s: string) => boolean>> = Object.freeze({
  'date-time': isDateTime,
  date: isDate,
  time: isTime,
  duration: (s: string) => DURATION.test(s),
  email: isEmail,
  hostname: isHostname,
  ipv4: (s: string) => IPV4.test(s),
  ipv6: isIpv6,
  uri: (s: string) => URI.test(s),
  uuid: (s: string) => UUID.test(s),
  regex: isPattern,
});
