// The channel-pattern index used to resolve per-channel limits. It reproduces the
// reference's util.Sublist (Insert, Match, Subjects) because the order in which Match
// returns patterns *is* the inheritance order: widest first (`>`, `foo.>`), then
// `foo.*`, then the literal `foo.bar`. The core server's subject index answers a
// different question (which subscriptions receive a message) and keeps no such order.
// Match treats the tokens of the name it is given literally, so matching a wildcard
// pattern's own name returns the patterns that contain it, itself last.
//
// One difference: the reference walks literal tokens in Go map order (random); here
// Subjects() sorts them, so inheritance between overlapping patterns of different
// shapes (`*.bar` and `foo.>`) is the same on every start.

interface Node<T> {
  next: Level<T> | undefined;
  readonly elements: T[];
}

interface Level<T> {
  readonly nodes: Map<string, Node<T>>;
  pwc: Node<T> | undefined;
  fwc: Node<T> | undefined;
}

function newLevel<T>(): Level<T> {
  return { nodes: new Map(), pwc: undefined, fwc: undefined };
}

function newNode<T>(): Node<T> {
  return { next: undefined, elements: [] };
}

export class ChannelPatternIndex<T> {
  private readonly root: Level<T> = newLevel();

  /** Adds `element` under `pattern` (a channel name, wildcards allowed, already validated). */
  insert(pattern: string, element: T): void {
    let level = this.root;
    let node: Node<T> | undefined;
    for (const token of pattern.split('.')) {
      if (token === '*') node = level.pwc ??= newNode();
      else if (token === '>') node = level.fwc ??= newNode();
      else {
        node = level.nodes.get(token);
        if (node === undefined) {
          node = newNode();
          level.nodes.set(token, node);
        }
      }
      level = node.next ??= newLevel();
    }
    node!.elements.push(element);
  }

  /** Elements whose pattern covers `name`, widest first (the reference's matchLevel). */
  match(name: string): T[] {
    const out: T[] = [];
    matchLevel(this.root, name.split('.'), 0, out);
    return out;
  }

  /** Every pattern, widest first within each level (the reference's getSubjects). */
  patterns(): string[] {
    const out: string[] = [];
    collect(this.root, '', out);
    return out;
  }
}

function matchLevel<T>(start: Level<T>, tokens: string[], from: number, out: T[]): void {
  let level: Level<T> | undefined = start;
  let pwc: Node<T> | undefined;
  let node: Node<T> | undefined;
  for (let i = from; i < tokens.length; i++) {
    if (level === undefined) return;
    if (level.fwc !== undefined) out.push(...level.fwc.elements);
    pwc = level.pwc;
    if (pwc?.next !== undefined) matchLevel(pwc.next, tokens, i + 1, out);
    node = level.nodes.get(tokens[i]!);
    level = node?.next;
  }
  if (pwc !== undefined) out.push(...pwc.elements);
  if (node !== undefined) out.push(...node.elements);
}

function collect<T>(level: Level<T> | undefined, prefix: string, out: string[]): void {
  if (level === undefined) return;
  const join = (token: string): string => (prefix === '' ? token : `${prefix}.${token}`);
  if (level.fwc !== undefined) out.push(join('>'));
  if (level.pwc !== undefined) {
    if (level.pwc.elements.length > 0) out.push(join('*'));
    collect(level.pwc.next, join('*'), out);
  }
  for (const token of [...level.nodes.keys()].sort()) {
    const node = level.nodes.get(token)!;
    if (node.elements.length > 0) out.push(join(token));
    collect(node.next, join(token), out);
  }
}
