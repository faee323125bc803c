// The matching rules of spec §4.3 written the slow, obvious way, as the oracle for
// the matcher and the subscription index.

/** Whether a published subject reaches a subscription pattern. */
export function bruteMatches(literal: string, pattern: string): boolean {
  const lt = literal.split('.');
  // An empty token anywhere matches nothing.
  if (lt.some((t) => t === '')) return false;
  const pt = pattern.split('.');
  for (let i = 0; i < pt.length; i++) {
    const p = pt[i]!;
    // `>` takes one or more trailing tokens.
    if (p === '>') return lt.length > i;
    if (i >= lt.length) return false;
    // `*` takes any one token, a literal `*` or `>` included.
    if (p !== '*' && p !== lt[i]) return false;
  }
  return lt.length === pt.length;
}
