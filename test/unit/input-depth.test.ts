import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, jsonDepth, parseJsonBody, tooDeepPointer } from '../../src/http/input.js';

/** A body nested too deeply is refused before it is parsed, at the JSON Pointer of the first value past the limit. */
describe('tooDeepPointer', () => {
  const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

  it('names the keys and indexes on the way down, escaped as JSON Pointer says', () => {
    const text = `{ "a": 1, "b/c": [ 0, "x", { "q\\"~": ${nest(10)} } ] }`;
    expect(jsonDepth(text)).toBe(13);
    expect(tooDeepPointer(text, 4)).toBe('/b~1c/2/q"~0/0');
    expect(tooDeepPointer(text, 3)).toBe('/b~1c/2/q"~0');
    expect(tooDeepPointer(text, 20)).toBe('/');
  });

  it('skips brackets and commas inside strings', () => {
    const text = `{"s":"[[{,,]]","t":[ "]", "{", ${nest(3)} ]}`;
    expect(tooDeepPointer(text, 3)).toBe('/t/2/0');
  });

  it('is the pointer of the 422 a too-deep body gets', () => {
    const text = `{"editorContent":{"blocks":[${'{"type":"columns","columns":[['.repeat(40)}${']]}'.repeat(40)}]}}`;
    expect(jsonDepth(text)).toBeGreaterThan(MAX_JSON_DEPTH);
    try {
      parseJsonBody(text);
      expect.unreachable();
    } catch (err) {
      const path = (err as { errors: { path: string }[] }).errors[0]!.path;
      expect(path).toMatch(/^\/editorContent\/blocks\/0(\/columns\/0\/0)+/);
    }
  });
});
