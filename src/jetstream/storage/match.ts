// Subject relations the engine needs beyond literal matching (src/subjects): whether two
// filters overlap (stream subjects, as nats-server's SubjectsCollide) and whether one is
// contained in another (a consumer's filter within its stream's subjects).

export { subjectMatches } from '../../subjects/validate.js';

/** Whether two subjects (either may hold wildcards) can match a common literal subject. */
export function subjectsCollide(a: string, b: string): boolean {
  const ta = a.split('.');
  const tb = b.split('.');
  const n = Math.min(ta.length, tb.length);
  for (let i = 0; i < n; i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === '>' || y === '>') return true;
    if (x === '*' || y === '*') continue;
    if (x !== y) return false;
  }
  return ta.length === tb.length;
}

/** Whether every subject `sub` matches is also matched by `of` (both may hold wildcards). */
export function subjectIsSubset(sub: string, of: string): boolean {
  const ts = sub.split('.');
  const to = of.split('.');
  for (let i = 0; i < ts.length; i++) {
    if (i >= to.length) return false;
    const o = to[i]!;
    const s = ts[i]!;
    if (o === '>') return true;
    if (s === '>') return false;
    if (o === '*') continue;
    if (s === '*' || s !== o) return false;
  }
  return ts.length === to.length;
}
