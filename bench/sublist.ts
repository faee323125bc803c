// Subject index: match with the results cache (repeated subjects), without it
// (every subject new), and on a wildcard-heavy table.

import { Sublist, type Indexed } from '../src/subjects/sublist.js';
import { measure, type BenchResult } from './timing.js';

interface Sub extends Indexed {
  id: number;
}

function table(count: number, wildcards: boolean): Sublist<Sub> {
  const sl = new Sublist<Sub>();
  for (let i = 0; i < count; i++) {
    const a = i % 10;
    const b = Math.floor(i / 10) % 100;
    let subject = `orders.region${a}.store${b}.item${i}`;
    if (wildcards) {
      if (i % 3 === 0) subject = `orders.region${a}.*.item${i % 50}`;
      else if (i % 3 === 1) subject = `orders.region${a}.store${b}.>`;
      else subject = `orders.*.store${b}.*`;
    }
    sl.insert({ subject, queue: i % 7 === 0 ? 'workers' : null, id: i });
  }
  return sl;
}

export function sublistBenchmarks(ms: number): BenchResult[] {
  const results: BenchResult[] = [];
  const subjects: string[] = [];
  for (let i = 0; i < 1000; i++) subjects.push(`orders.region${i % 10}.store${i % 100}.item${i}`);

  for (const wildcards of [false, true]) {
    const label = wildcards ? 'wildcard table' : 'literal table';
    const cached = table(10000, wildcards);
    let k = 0;
    results.push(
      measure(
        `sublist match, cache, ${label}`,
        ms,
        1000,
        () => {
          cached.match(subjects[k++ % 100]!);
        },
        '10k subs, 100 subjects',
      ),
    );
    const uncached = new Sublist<Sub>({ cache: false });
    cached.forEach((s) => uncached.insert(s));
    k = 0;
    results.push(
      measure(
        `sublist match, no cache, ${label}`,
        ms,
        1000,
        () => {
          uncached.match(subjects[k++ % 1000]!);
        },
        '10k subs, 1000 subjects',
      ),
    );
  }
  const churn = table(10000, true);
  let n = 0;
  results.push(
    measure(
      'sublist insert+remove',
      ms,
      100,
      () => {
        const s: Sub = { subject: `orders.region${n % 10}.*.x${n}`, queue: null, id: n++ };
        churn.insert(s);
        churn.remove(s);
      },
      'wildcard sub, 10k table',
    ),
  );
  return results;
}
