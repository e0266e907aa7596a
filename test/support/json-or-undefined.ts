/** A response body as JSON, or undefined when it is empty or not JSON (tests then look at the text). */
export function jsonOrUndefined(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
