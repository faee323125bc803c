// Subject rules of the client protocol. Subjects travel through the server as latin1
// strings holding their raw bytes (one char per byte), so these checks work on
// char codes and never decode UTF-8.

const DOT = 0x2e;
const STAR = 0x2a;
const GT = 0x3e;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

/**
 * A subscription subject the trie accepts: no empty token and nothing after a `>`
 * token. Like the reference, `foo*` is a literal token, not an error.
 */
export function isValidSubscribeSubject(subject: string): boolean {
  const n = subject.length;
  if (n === 0) return false;
  let tokenStart = 0;
  let sawFwc = false;
  for (let i = 0; i <= n; i++) {
    if (i === n || subject.charCodeAt(i) === DOT) {
      const len = i - tokenStart;
      if (len === 0 || sawFwc) return false;
      if (len === 1 && subject.charCodeAt(tokenStart) === GT) sawFwc = true;
      tokenStart = i + 1;
    }
  }
  return true;
}

/** A literal subject a message may be published to: no empty token, no `*` or `>` token. */
export function isValidLiteralSubject(subject: string): boolean {
  const n = subject.length;
  if (n === 0) return false;
  let tokenStart = 0;
  for (let i = 0; i <= n; i++) {
    if (i === n || subject.charCodeAt(i) === DOT) {
      const len = i - tokenStart;
      if (len === 0) return false;
      if (len === 1) {
        const c = subject.charCodeAt(tokenStart);
        if (c === STAR || c === GT) return false;
      }
      tokenStart = i + 1;
    }
  }
  return true;
}

/** The strict rules of the description (used by pedantic checks and config values). */
export function isValidSubject(subject: string, allowWildcards: boolean): boolean {
  for (let i = 0; i < subject.length; i++) {
    const c = subject.charCodeAt(i);
    if (c === SPACE || c === TAB || c === CR || c === LF) return false;
  }
  if (!isValidSubscribeSubject(subject)) return false;
  if (allowWildcards) {
    // A wildcard must be a whole token: foo*.bar and foo> are invalid here.
    let tokenStart = 0;
    for (let i = 0; i <= subject.length; i++) {
      if (i === subject.length || subject.charCodeAt(i) === DOT) {
        for (let j = tokenStart; j < i; j++) {
          const c = subject.charCodeAt(j);
          if ((c === STAR || c === GT) && i - tokenStart !== 1) return false;
        }
        tokenStart = i + 1;
      }
    }
    return true;
  }
  return isValidLiteralSubject(subject);
}

/** True when the subject has a `*` or `>` token. */
export function hasWildcard(subject: string): boolean {
  const n = subject.length;
  for (let i = 0; i < n; i++) {
    const c = subject.charCodeAt(i);
    if (
      (c === STAR || c === GT) &&
      (i === 0 || subject.charCodeAt(i - 1) === DOT) &&
      (i + 1 === n || subject.charCodeAt(i + 1) === DOT)
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Whether a literal subject is matched by a pattern, token by token, without
 * splitting either string. Used to patch the results cache precisely.
 */
export function subjectMatches(literal: string, pattern: string): boolean {
  const ln = literal.length;
  const pn = pattern.length;
  let li = 0;
  let pi = 0;
  while (true) {
    let pe = pattern.indexOf('.', pi);
    if (pe < 0) pe = pn;
    let le = literal.indexOf('.', li);
    if (le < 0) le = ln;
    const plen = pe - pi;
    const llen = le - li;
    if (llen === 0) return false; // an empty literal token matches nothing
    if (plen === 1 && pattern.charCodeAt(pi) === GT) {
      // `>` takes the rest, which must hold no empty token either (`foo..bar` matches nothing).
      return literal.indexOf('..', le) < 0 && literal.charCodeAt(ln - 1) !== DOT;
    }
    if (!(plen === 1 && pattern.charCodeAt(pi) === STAR)) {
      if (plen !== llen) return false;
      for (let k = 0; k < plen; k++) {
        if (pattern.charCodeAt(pi + k) !== literal.charCodeAt(li + k)) return false;
      }
    }
    const patternDone = pe === pn;
    const literalDone = le === ln;
    if (patternDone || literalDone) return patternDone && literalDone;
    pi = pe + 1;
    li = le + 1;
  }
}
