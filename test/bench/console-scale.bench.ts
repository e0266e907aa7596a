// The console at scale (issue 33): with 5,000 tools, the simulator's first answer and checkbox
// repaint, Home after sign-in (and whether its overview holds up other requests), and the tools
// search from keystroke to results, measured in Debian's chromium. Prints figures; asserts nothing.
// Builds the console first when stale.   npm run bench -- console-scale   (BENCH_TOOLS=600 for a quick run)
import { consoleScaleLines, measureConsoleAtScale } from './console-scale.ts';

const figures = await measureConsoleAtScale({ count: Number(process.env.BENCH_TOOLS ?? 5000), rounds: Number(process.env.BENCH_ROUNDS ?? 5) });
for (const line of consoleScaleLines(figures)) console.log(line);
