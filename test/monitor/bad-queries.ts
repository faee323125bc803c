// The /connz queries with bad values whose answers capture-reference.ts records
// from the reference and connz.test.ts checks wirebus against.

export const CONNZ_BAD_QUERIES = [
  '/connz?sort=bogus',
  '/connz?state=bogus',
  '/connz?limit=abc',
  '/connz?offset=1.5',
  '/connz?subs=maybe',
  '/connz?auth=yes',
  '/connz?cid=-1',
  '/connz?sort=stop',
  '/connz?sort=reason&state=open',
];
