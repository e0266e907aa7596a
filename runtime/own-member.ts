// The console also runs this in the browser: no node: modules here.

/**
 * Sets `name` on `target` as an own data member, whatever the name: member names are data
 * (docs/spec.md R1.1, R14.7), and assigning `__proto__` would set the object's prototype instead.
 */
export function setOwnMember(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}
