// Seeded randomness for property and differential tests: a failure names a seed that reproduces it.

/** mulberry32: small, deterministic, good enough to pick things. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const some = <T>(xs: readonly T[], max: number): T[] => [...new Set(Array.from({ length: int(max + 1) }, () => pick(xs)))];
  const chance = (p: number) => next() < p;
  return { next, int, pick, some, chance };
}

export type Rng = ReturnType<typeof rng>;
