// Channel name rules of the reference server (util.IsChannelNameValid).
//
// Clients may only use literal names; per-channel store limits may also use `*` (one
// token) and `>` (the last token). A name is never empty, never has `/`, never starts
// or ends with `.`, never has an empty token (`..`).

const DOT = 0x2e;
const SLASH = 0x2f;
const STAR = 0x2a;
const GT = 0x3e;

export function isChannelNameValid(name: string, wildcardsAllowed: boolean): boolean {
  const n = name.length;
  if (n === 0 || name.charCodeAt(0) === DOT) return false;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c === SLASH) return false;
    if (c === DOT && (i === n - 1 || name.charCodeAt(i + 1) === DOT)) return false;
    if (c !== STAR && c !== GT) continue;
    if (!wildcardsAllowed) return false;
    // A wildcard is a whole token, and `>` only the last one.
    if (i > 0 && name.charCodeAt(i - 1) !== DOT) return false;
    if (c === GT && i !== n - 1) return false;
    if (i < n - 1 && name.charCodeAt(i + 1) !== DOT) return false;
  }
  return true;
}

/** True when a valid name has no wildcard. */
export function isChannelNameLiteral(name: string): boolean {
  return !name.includes('*') && !name.includes('>');
}
