import { parse as parseQuery } from 'fast-querystring';
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { DomainError, validationFailed, type FieldError } from '../errors/errors.js';

/**
 * The input layer's rules for every value a client sends, whatever the route: bodies (JSON, form-encoded),
 * query strings and path parameters. They make SQLite and PostgreSQL store the same things and keep
 * hostile shapes away from the code behind (docs/security.md):
 *
 * - no NUL character anywhere (PostgreSQL text cannot hold one; SQLite would store it and C code truncate it);
 * - well-formed Unicode only: a lone surrogate (`"\ud800"`) has no UTF-8 form, so PostgreSQL's driver would
 *   silently store U+FFFD where SQLite stores the surrogate;
 * - JSON nested at most MAX_JSON_DEPTH levels: the depth is measured on the text before it is parsed, so
 *   nothing downstream (JSON.stringify, a hash, a schema validator) ever recurses 10,000 levels deep.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a string is refused, or null when it is fine. */
export function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  if (!s.isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)';
  return null;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first bad string in a parsed value (keys included), as a field error with a JSON Pointer under
 * `base`; null when every string is fine. Iterative: the depth was bounded already, but a wide value
 * should not cost recursion either.
 */
export function findBadString(value: unknown, base = ''): FieldError | null {
  if (allStringsFine(value, 0)) return null;
  const stack: [unknown, string][] = [[value, base]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return { path: path || '/', message: problem };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const problem = stringProblem(k);
        if (problem)
          return { path: `${path}/${escapePointer(k.replaceAll('\u0000', '\\u0000'))}`, message: `key ${problem}` };
        stack.push([child, `${path}/${escapePointer(k)}`]);
      }
    }
  }
  return null;
}

/**
 * The common case of findBadString, every string fine, answered without building a path or a stack: this
 * runs on every body, path and query string. Gives up (false) past MAX_JSON_DEPTH, leaving the verdict to the
 * iterative walk.
 */
function allStringsFine(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return stringProblem(v) === null;
  if (v === null || typeof v !== 'object') return true;
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(v)) {
    for (const item of v) if (!allStringsFine(item, depth + 1)) return false;
    return true;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (stringProblem(k) !== null || !allStringsFine((v as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
}

/** How deeply the JSON text nests arrays and objects (strings skipped); stops counting past `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return max;
}

/**
 * The JSON Pointer of the first value of a JSON text that opens past `limit` levels (`/emailContent/editorContent/
 * blocks/0/columns/0/0/…`), or `/` when the text cannot be read that far. Runs only on a text found too deep.
 */
export function tooDeepPointer(text: string, limit = MAX_JSON_DEPTH): string {
  const frames: { array: boolean; key: string; index: number; expectKey: boolean }[] = [];
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) {
        inString = false;
        const top = frames[frames.length - 1];
        if (top && !top.array && top.expectKey) {
          try {
            top.key = String(JSON.parse(text.slice(start, i + 1)));
          } catch {
            return '/';
          }
          top.expectKey = false;
        }
      }
    } else if (c === 34) {
      inString = true;
      start = i;
    } else if (c === 91 || c === 123) {
      if (frames.length >= limit)
        return frames.map((f) => `/${f.array ? String(f.index) : escapePointer(f.key)}`).join('') || '/';
      frames.push({ array: c === 91, key: '', index: 0, expectKey: c === 123 });
    } else if (c === 93 || c === 125) {
      frames.pop();
    } else if (c === 44) {
      const top = frames[frames.length - 1];
      if (top?.array) top.index++;
      else if (top) top.expectKey = true;
    }
  }
  return '/';
}

export const tooDeep = (path = '/') =>
  validationFailed([{ path, message: `nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects` }]);

export const invalidJson = () => new DomainError('invalid_json', 'the request body is not valid JSON');

/**
 * Parses a JSON body under the rules above: 400 invalid_json when it is not JSON (or tries prototype
 * pollution with `__proto__` / `constructor.prototype`: secure-json-parse, as Fastify's own parser), 422
 * validation_failed when it nests too deeply or holds a bad string (with the pointer to it).
 */
export function parseJsonBody(text: string): unknown {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw tooDeep(tooDeepPointer(text));
  let value: unknown;
  try {
    value = sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw invalidJson();
  }
  checkStrings(value);
  return value;
}

/** 422 validation_failed at the first bad string of an already parsed value (form bodies, query strings). */
export function checkStrings(value: unknown, base = ''): void {
  const bad = findBadString(value, base);
  if (bad) throw validationFailed([bad]);
}

/** A form-encoded body (`a=1&b=2`) under the same rules: 422 at the first field with a bad string. */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const value = parseQuery(text) as Record<string, string | string[]>;
  checkStrings(value);
  return value;
}

/**
 * Registers the body parsers of a scope: JSON (an empty body is "no body") and, when `form` is set,
 * form-encoded bodies up to that many bytes. Parse errors reach the scope's error handler as domain errors.
 */
export function registerBodyParsers(app: FastifyInstance, opts: { form?: { bodyLimit: number } } = {}): void {
  if (app.hasContentTypeParser('application/json')) app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  if (opts.form) {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: opts.form.bodyLimit },
      (_req, body, done) => {
        try {
          done(null, parseFormBody(body as string));
        } catch (err) {
          done(err as Error, undefined);
        }
      },
    );
  }
}
