/** Where a CLI command writes: lines for the user (stdout) and errors (stderr). Tests pass their own. */
export type Output = { log: (line: string) => void; error: (line: string) => void };

/** The process's console; looked up at each call, so a test that replaces console.log sees the lines. */
export const consoleOutput: Output = { log: (l) => console.log(l), error: (l) => console.error(l) };
