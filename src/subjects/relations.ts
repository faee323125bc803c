// Relations between two subjects that may both hold wildcards: whether some literal
// subject matches both (nats-server's SubjectsCollide: stream subjects may not
// overlap, deny rules apply to wildcard subscriptions), and whether one covers the
// other (export/import rules, a consumer's filter within its stream's subjects).

/** True when some literal subject matches both patterns. */
export function subjectsIntersect(a: string, b: string): boolean {
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

/** True when every subject matching `subject` also matches `pattern`. */
export function isSubset(subject: string, pattern: string): boolean {
  const ts = subject.split('.');
  const tp = pattern.split('.');
  for (let i = 0; i < tp.length; i++) {
    const p = tp[i]!;
    if (p === '>') return i < ts.length;
    if (i >= ts.length) return false;
    const s = ts[i]!;
    if (s === '>') return false;
    if (p === '*') continue;
    if (s === '*' || s !== p) return false;
  }
  return ts.length === tp.length;
}
