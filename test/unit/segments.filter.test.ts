import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { normalizeDateTime } from '../../src/lib/time.js';
import {
  MAX_DEPTH,
  MAX_NODES,
  compileFilter,
  topicReferences,
  validateFilter,
  type Filter,
} from '../../src/audience/segments/segments.filter.js';

const paths = (raw: unknown) => validateFilter(raw).map((e) => e.path);
const errorsOf = (raw: unknown) => validateFilter(raw);
const TS = '2026-11-21T10:00:00.000Z';

/** `levels` filters deep: `levels - 1` nested groups around `inner` (the top-level filter is level 1). */
function nest(
  levels: number,
  inner: unknown = { field: 'email', op: 'exists' },
  group: 'all' | 'any' = 'all',
): unknown {
  let f = inner;
  for (let i = 1; i < levels; i++) f = { [group]: [f] };
  return f;
}
const pathAt = (level: number, group = 'all') => `/filter${`/${group}/0`.repeat(level - 1)}`;

describe('validateFilter: valid filters', () => {
  it.each([
    ['empty all', { all: [] }],
    ['empty any', { any: [] }],
    ['email eq', { field: 'email', op: 'eq', value: 'A@Example.com' }],
    ['firstName contains', { field: 'firstName', op: 'contains', value: 'an' }],
    ['lastName startsWith empty', { field: 'lastName', op: 'startsWith', value: '' }],
    ['status in', { field: 'status', op: 'in', value: ['SUBSCRIBED', 'PENDING'] }],
    ['status contains any text', { field: 'status', op: 'contains', value: 'sub' }],
    ['status gt a string', { field: 'status', op: 'gt', value: 'M' }],
    ['createdAt gte with an offset', { field: 'createdAt', op: 'gte', value: '2026-11-21T12:00:00+02:00' }],
    [
      'createdAt lower-case t and z, microseconds',
      { field: 'createdAt', op: 'lt', value: '2026-11-21t10:00:00.123456z' },
    ],
    ['createdAt in', { field: 'createdAt', op: 'in', value: [TS] }],
    ['createdAt exists', { field: 'createdAt', op: 'exists' }],
    ['property eq number', { field: 'properties.age', op: 'eq', value: 30 }],
    ['property eq boolean', { field: 'properties.vip', op: 'eq', value: false }],
    ['property neq string', { field: 'properties.plan', op: 'neq', value: 'pro' }],
    ['property gt number', { field: 'properties.score', op: 'gt', value: -1.5 }],
    ['property lte string', { field: 'properties.plan', op: 'lte', value: 'm' }],
    ['property in mixed scalars', { field: 'properties.x', op: 'in', value: ['a', 1, true] }],
    ['property notExists', { field: 'properties.x', op: 'notExists' }],
    ['property key of 64 characters', { field: `properties.${'a'.repeat(64)}`, op: 'exists' }],
    ['property key with digits and _', { field: 'properties.a_1B', op: 'exists' }],
    ['topic', { topic: 'topic_1', subscribed: false }],
    ['string of 1000 emoji', { field: 'firstName', op: 'eq', value: '😀'.repeat(1000) }],
    ['in of 1000 values', { field: 'properties.n', op: 'in', value: Array.from({ length: 1000 }, (_, i) => i) }],
    [
      'nested',
      {
        any: [
          {
            all: [
              { field: 'email', op: 'endsWith', value: '@x.com' },
              { topic: 't', subscribed: true },
            ],
          },
          { field: 'status', op: 'eq', value: 'BOUNCED' },
        ],
      },
    ],
  ])('%s', (_label, filter) => {
    expect(errorsOf(filter)).toEqual([]);
  });
});

describe('validateFilter: errors and their paths', () => {
  it.each([
    ['null', null, '/filter'],
    ['an array', [], '/filter'],
    ['a string', 'email', '/filter'],
    ['a number', 1, '/filter'],
    ['an empty object', {}, '/filter'],
    ['an object without a known key', { op: 'eq', value: 1 }, '/filter'],
    ['all not an array', { all: {} }, '/filter/all'],
    ['any not an array', { any: 'x' }, '/filter/any'],
    ['all with an extra key', { all: [], x: 1 }, '/filter/x'],
    ['all and any together', { all: [], any: [] }, '/filter/any'],
    ['a group member that is not a filter', { all: [{ field: 'email', op: 'exists' }, 5] }, '/filter/all/1'],
    ['field not a string', { field: 5, op: 'exists' }, '/filter/field'],
    ['unknown field', { field: 'phone', op: 'exists' }, '/filter/field'],
    ['field in snake case', { field: 'first_name', op: 'exists' }, '/filter/field'],
    ['properties without a key', { field: 'properties.', op: 'exists' }, '/filter/field'],
    ['properties key starting with a digit', { field: 'properties.1a', op: 'exists' }, '/filter/field'],
    ['properties key with a dash', { field: 'properties.a-b', op: 'exists' }, '/filter/field'],
    ['properties key with a dot', { field: 'properties.a.b', op: 'exists' }, '/filter/field'],
    ['properties key with a quote (injection)', { field: "properties.a') or 1=1 --", op: 'exists' }, '/filter/field'],
    ['properties key with a JSON path', { field: 'properties.a[0]', op: 'exists' }, '/filter/field'],
    ['properties key of 65 characters', { field: `properties.${'a'.repeat(65)}`, op: 'exists' }, '/filter/field'],
    ['bare properties', { field: 'properties', op: 'exists' }, '/filter/field'],
    ['op missing', { field: 'email', value: 'x' }, '/filter/op'],
    ['unknown op', { field: 'email', op: 'like', value: 'x' }, '/filter/op'],
    ['op not a string', { field: 'email', op: ['eq'], value: 'x' }, '/filter/op'],
    ['value missing for eq', { field: 'email', op: 'eq' }, '/filter/value'],
    ['value missing for in', { field: 'properties.a', op: 'in' }, '/filter/value'],
    ['value with exists', { field: 'email', op: 'exists', value: 'x' }, '/filter/value'],
    ['null value with notExists', { field: 'properties.a', op: 'notExists', value: null }, '/filter/value'],
    ['condition extra key', { field: 'email', op: 'eq', value: 'x', extra: 1 }, '/filter/extra'],
    ['condition with a topic key too', { field: 'email', op: 'exists', topic: 't' }, '/filter/topic'],
    ['text eq a number', { field: 'firstName', op: 'eq', value: 1 }, '/filter/value'],
    ['text eq null', { field: 'lastName', op: 'eq', value: null }, '/filter/value'],
    ['text gt a number', { field: 'email', op: 'gt', value: 5 }, '/filter/value'],
    ['text in with a number', { field: 'email', op: 'in', value: ['a@b.co', 1] }, '/filter/value/1'],
    ['contains a number', { field: 'properties.a', op: 'contains', value: 1 }, '/filter/value'],
    ['startsWith a boolean', { field: 'firstName', op: 'startsWith', value: true }, '/filter/value'],
    ['endsWith an array', { field: 'lastName', op: 'endsWith', value: ['a'] }, '/filter/value'],
    ['status eq an unknown status', { field: 'status', op: 'eq', value: 'ACTIVE' }, '/filter/value'],
    ['status eq in lower case', { field: 'status', op: 'neq', value: 'subscribed' }, '/filter/value'],
    ['status in with an unknown status', { field: 'status', op: 'in', value: ['PENDING', 'GONE'] }, '/filter/value/1'],
    ['createdAt not a date', { field: 'createdAt', op: 'gt', value: 'yesterday' }, '/filter/value'],
    ['createdAt a date without a time', { field: 'createdAt', op: 'gt', value: '2026-11-21' }, '/filter/value'],
    ['createdAt without an offset', { field: 'createdAt', op: 'gt', value: '2026-11-21T10:00:00' }, '/filter/value'],
    ['createdAt 30 February', { field: 'createdAt', op: 'eq', value: '2026-02-30T00:00:00Z' }, '/filter/value'],
    ['createdAt hour 24', { field: 'createdAt', op: 'eq', value: '2026-01-01T24:00:00Z' }, '/filter/value'],
    ['createdAt before year 0', { field: 'createdAt', op: 'eq', value: '0000-01-01T00:00:00+01:00' }, '/filter/value'],
    ['createdAt a number', { field: 'createdAt', op: 'lt', value: 1764000000000 }, '/filter/value'],
    ['createdAt in with a bad date', { field: 'createdAt', op: 'in', value: [TS, 'x'] }, '/filter/value/1'],
    ['createdAt contains', { field: 'createdAt', op: 'contains', value: '2026' }, '/filter/op'],
    ['createdAt startsWith', { field: 'createdAt', op: 'startsWith', value: '2026' }, '/filter/op'],
    ['property eq null', { field: 'properties.a', op: 'eq', value: null }, '/filter/value'],
    ['property eq an object', { field: 'properties.a', op: 'eq', value: { x: 1 } }, '/filter/value'],
    ['property eq an array', { field: 'properties.a', op: 'eq', value: [1] }, '/filter/value'],
    ['property gt a boolean', { field: 'properties.a', op: 'gt', value: true }, '/filter/value'],
    ['property lt null', { field: 'properties.a', op: 'lt', value: null }, '/filter/value'],
    ['in not an array', { field: 'properties.a', op: 'in', value: 1 }, '/filter/value'],
    ['in empty', { field: 'email', op: 'in', value: [] }, '/filter/value'],
    [
      'in of 1001 values',
      { field: 'properties.n', op: 'in', value: Array.from({ length: 1001 }, (_, i) => i) },
      '/filter/value',
    ],
    ['in with null', { field: 'properties.a', op: 'in', value: [1, null] }, '/filter/value/1'],
    ['in with a nested array', { field: 'properties.a', op: 'in', value: [[1]] }, '/filter/value/0'],
    ['string of 1001 characters', { field: 'firstName', op: 'eq', value: 'a'.repeat(1001) }, '/filter/value'],
    ['string with NUL', { field: 'properties.a', op: 'eq', value: 'a\u0000b' }, '/filter/value'],
    ['string with a lone surrogate', { field: 'firstName', op: 'contains', value: 'a\ud800' }, '/filter/value'],
    ['topic not a string', { topic: 5, subscribed: true }, '/filter/topic'],
    ['topic empty', { topic: '', subscribed: true }, '/filter/topic'],
    ['topic of 65 characters', { topic: 't'.repeat(65), subscribed: true }, '/filter/topic'],
    ['subscribed missing', { topic: 't' }, '/filter/subscribed'],
    ['subscribed not a boolean', { topic: 't', subscribed: 'true' }, '/filter/subscribed'],
    ['topic with an extra key', { topic: 't', subscribed: true, value: 1 }, '/filter/value'],
    ['__proto__ key', JSON.parse('{"all": [], "__proto__": {"x": 1}}'), '/filter/__proto__'],
  ])('%s → %s', (_label, filter, path) => {
    const errors = errorsOf(filter);
    expect(errors.map((e) => e.path)).toEqual([path]);
    expect(errors[0]!.message.length).toBeGreaterThan(0);
  });

  it('lists every violation, with paths into nested groups (and escapes keys)', () => {
    const filter = {
      all: [
        { field: 'email', op: 'exists' },
        { field: 'phone', op: 'like', value: 1 },
        { any: [{ topic: 1 }, { field: 'properties.a', op: 'in', value: [1, null, {}] }] },
        { 'a/b~c': 1, all: [] },
      ],
    };
    expect(paths(filter)).toEqual([
      '/filter/all/1/field',
      '/filter/all/1/op',
      '/filter/all/2/any/0/topic',
      '/filter/all/2/any/0/subscribed',
      '/filter/all/2/any/1/value/1',
      '/filter/all/2/any/1/value/2',
      '/filter/all/3/a~1b~0c',
    ]);
  });

  it('reports paths under the base path it is given', () => {
    expect(validateFilter({ all: [{ field: 'x', op: 'exists' }] }, '/segment/filter')).toEqual([
      { path: '/segment/filter/all/0/field', message: expect.any(String) },
    ]);
  });

  it('topicReferences lists the topics a filter names, with their paths', () => {
    expect(
      topicReferences({
        any: [
          { topic: 'a', subscribed: true },
          {
            all: [
              { field: 'email', op: 'exists' },
              { topic: 'b', subscribed: false },
            ],
          },
        ],
      }),
    ).toEqual([
      { topic: 'a', path: '/filter/any/0/topic' },
      { topic: 'b', path: '/filter/any/1/all/1/topic' },
    ]);
  });

  it('stops listing after 100 errors', () => {
    const errors = errorsOf({ any: Array.from({ length: 150 }, () => ({ field: 'x', op: 'exists' })) });
    expect(errors).toHaveLength(100);
  });
});

describe('validateFilter: depth and size', () => {
  it(`accepts ${MAX_DEPTH} levels, condition or group at the bottom, all or any`, () => {
    expect(MAX_DEPTH).toBe(8);
    expect(errorsOf(nest(8))).toEqual([]);
    expect(errorsOf(nest(8, { any: [] }, 'any'))).toEqual([]);
    expect(errorsOf(nest(8, { topic: 't', subscribed: true }, 'any'))).toEqual([]);
  });

  it('rejects the 9th level at its path, whatever is there', () => {
    expect(errorsOf(nest(9))).toEqual([{ path: pathAt(9), message: 'nests deeper than 8 levels' }]);
    expect(paths(nest(9, { all: [] }))).toEqual([pathAt(9)]);
    expect(paths(nest(9, 'garbage', 'any'))).toEqual([pathAt(9, 'any')]);
    expect(paths({ any: [nest(7), nest(8)] })).toEqual([`/filter/any/1${'/all/0'.repeat(7)}`]);
  });

  it('does not look below the limit, however deep the filter goes', () => {
    expect(paths(nest(10_000))).toEqual([pathAt(9)]);
  });

  it(`accepts ${MAX_NODES} conditions and groups in total, not one more`, () => {
    const conditions = (n: number) => Array.from({ length: n }, () => ({ field: 'email', op: 'exists' }));
    expect(errorsOf({ all: conditions(MAX_NODES - 1) })).toEqual([]);
    expect(errorsOf({ all: conditions(MAX_NODES) })).toEqual([
      { path: '/filter', message: `must have at most ${MAX_NODES} conditions and groups in total` },
    ]);
    expect(paths({ any: [{ all: conditions(100) }, { all: conditions(100) }] })).toEqual(['/filter']);
  });
});

describe('normalizeDateTime', () => {
  it.each([
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T12:00:00.5+02:00', '2026-11-21T10:00:00.500Z'],
    ['2026-11-21t10:00:00.123999z', '2026-11-21T10:00:00.123Z'],
    ['2024-02-29T00:00:00-00:30', '2024-02-29T00:30:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('%s → %s', (input, out) => expect(normalizeDateTime(input)).toBe(out));

  it.each([
    '2025-02-29T00:00:00Z',
    '2026-11-21T10:00:60Z',
    '2026-11-21T10:00:00+24:00',
    '2026-11-21 10:00:00Z',
    '9999-12-31T23:59:59-01:00',
    '',
  ])('rejects %j', (input) => {
    expect(normalizeDateTime(input)).toBeUndefined();
  });
});

describe('compileFilter', () => {
  const engines = {
    sqlite: new Kysely<Database>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    }),
    postgres: new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    }),
  };
  const evil = "x' or '1'='1'; drop table contacts; --";
  const filter: Filter = {
    any: [
      { field: 'email', op: 'eq', value: evil },
      { field: 'firstName', op: 'contains', value: evil },
      { field: 'lastName', op: 'in', value: [evil] },
      { field: 'properties.plan', op: 'startsWith', value: evil },
      { field: 'properties.plan', op: 'gt', value: evil },
      { field: 'properties.plan', op: 'in', value: [evil, 1] },
      { field: 'properties.plan', op: 'eq', value: evil },
      { field: 'createdAt', op: 'gt', value: TS },
      { topic: evil, subscribed: true },
    ],
  };

  for (const [name, k] of Object.entries(engines)) {
    it(`${name}: every value and property key is a bound parameter, never SQL text`, () => {
      const compiled = k
        .selectFrom('contacts')
        .select('id')
        .where(compileFilter(filter, name as 'sqlite' | 'postgres', 'ws_1', new Map([[evil, 'OPT_IN']])))
        .compile();
      expect(compiled.sql).not.toContain('drop table');
      expect(compiled.sql).not.toContain('plan');
      expect(compiled.sql).not.toContain('ws_1');
      expect(compiled.sql).not.toContain('2026');
      expect(compiled.parameters).toContain('plan');
      expect(compiled.parameters).toContain('ws_1');
      expect(compiled.parameters.some((p) => typeof p === 'string' && p.includes('drop table'))).toBe(true);
    });
  }
});
