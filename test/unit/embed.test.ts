/**
 * The embed script as served (src/forms/hosted/embed.ts): the compiled runtime (src/forms/hosted/embed.runtime.ts, built by
 * scripts/build-embed.mjs) inside one IIFE called with the form's configuration, which stays escaped. What it does
 * in a browser is test/e2e/embed.e2e.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EMBED_INPUTS,
  EMBED_OUTPUT,
  EMBED_SOURCE,
  buildEmbedIfStale,
  compileEmbed,
} from '../../scripts/build-embed.mjs';
import {
  RUNTIME_FILE,
  RUNTIME_SOURCE,
  embedMarkup,
  embedRuntime,
  embedRuntimeWarning,
  embedScript,
  jsonForScript,
  loadRuntime,
} from '../../src/forms/hosted/embed.js';
import type { EmbedConfig } from '../../src/forms/hosted/embed.runtime.js';
import { PACKAGE_ROOT } from '../../src/lib/paths.js';

const HOSTILE = '</script><script>alert(1)</script><!-- \u2028\u2029 & `${x}` })(';

/** The configuration the served script calls the runtime with: the JSON literal at its end. */
function configOf(script: string): unknown {
  const tail = /\}\)\((\{.*\})\);\n$/s.exec(script);
  expect(tail).not.toBeNull();
  return JSON.parse(tail![1]!);
}

describe('embed.js', () => {
  it('is the compiled runtime in one IIFE with the configuration: it parses, declares nothing, and the config stays escaped', async () => {
    const formHtml = `<input name="a" style="color:red"><p title="${HOSTILE}">${HOSTILE}</p>`;
    const script = await embedScript({ slug: 's', action: 'http://x/f/s', display: 'POPUP', formHtml, title: HOSTILE });
    const runtime = await embedRuntime();
    expect(
      script.startsWith(
        `/* Formcast form embed: see docs/embedding.md */\n(function (cfg) {'use strict';\n${runtime}})(`,
      ),
    ).toBe(true);
    expect(runtime).toMatch(/\(cfg\);\}\)\(\);\n$/); // ends calling runEmbed with the wrapper's cfg
    expect(() => new vm.Script(script, { filename: 'embed.js' })).not.toThrow();
    // Nothing in it can end the <script> element, and nothing needs eval.
    expect(script).not.toMatch(/<\/script|<!--|[\u2028\u2029]/i);
    expect(script).not.toMatch(/\beval\(|new Function/);
    const cfg = configOf(script) as EmbedConfig;
    // The markup as embedMarkup leaves it (no style attributes), the </script> in it carried as data.
    expect(cfg).toEqual({
      slug: 's',
      action: 'http://x/f/s',
      display: 'POPUP',
      title: HOSTILE,
      html: embedMarkup(formHtml),
      css: expect.stringContaining(':host'),
    });
    expect(cfg.html.startsWith('<input name="a"><p title=')).toBe(true);
    expect(cfg.html).toContain('<script>alert(1)</script>');
    // A display the runtime does not know is served as inline.
    expect(
      configOf(await embedScript({ slug: 's', action: 'a', display: 'X' as never, formHtml: '', title: '' })),
    ).toMatchObject({ display: 'INLINE_EMBED' });
  });

  it('jsonForScript writes <, >, &, U+2028 and U+2029 as \\u escapes; the value reads back the same', () => {
    const value = { a: '</script><!-- & \u2028\u2029', b: [1, null, '>'] };
    const out = jsonForScript(value);
    expect(out).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(out)).toEqual(value);
    expect(embedMarkup('<div style="left:-1px" class="x"><input name="a" style="color:red"></div>')).toBe(
      '<div class="x"><input name="a"></div>',
    );
  });

  it('runs as a classic script: in a context without a DOM it gets as far as reaching for window', async () => {
    const served = await embedScript({
      slug: 's',
      action: 'http://x/f/s',
      display: 'INLINE_EMBED',
      formHtml: '',
      title: 't',
    });
    expect(() => vm.runInNewContext(served)).toThrow(/window is not defined/);
  });
});

describe('the runtime the server uses', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-embed-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** A package root with a runtime source of its own and, optionally, a build of it, at the given times (s). */
  function packageRoot(name: string, times: { source: number; built?: number }): string {
    const root = path.join(tmp, name);
    const put = (file: string, text: string, at: number) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
      fs.utimesSync(path.join(root, file), at, at);
    };
    put(
      EMBED_SOURCE,
      `export function runEmbed(cfg: { slug: string }): void { document.title = 'compiled ' + cfg.slug; }\n`,
      times.source,
    );
    if (times.built !== undefined) put(EMBED_OUTPUT, '/* the build */', times.built);
    return root;
  }

  it('is read from where the builder writes it', () => {
    expect([RUNTIME_FILE, RUNTIME_SOURCE]).toEqual([EMBED_OUTPUT, EMBED_SOURCE]);
    expect(EMBED_INPUTS).toContain(EMBED_SOURCE);
  });

  it('is dist/embed/runtime.js as the build left it, even older than its source: the server never compiles it', async () => {
    expect(await loadRuntime(packageRoot('fresh', { source: 1000, built: 1000 }))).toBe('/* the build */');
    expect(embedRuntimeWarning(packageRoot('fresh', { source: 1000, built: 1000 }))).toBeNull();
    expect(await loadRuntime(packageRoot('stale', { source: 2000, built: 1500 }))).toBe('/* the build */');
    expect(embedRuntimeWarning(packageRoot('stale', { source: 2000, built: 1500 }))).toMatch(
      /dist\/embed\/runtime\.js\) is older than src\/forms\/hosted\/embed\.runtime\.ts: .*npm run build/,
    );
  });

  it('not built: 503 unavailable saying what to run, and a warning for `formcast serve` to log at start', async () => {
    const root = packageRoot('missing', { source: 1000 });
    await expect(loadRuntime(root)).rejects.toMatchObject({
      code: 'unavailable',
      status: 503,
      message: expect.stringMatching(/embed runtime \(dist\/embed\/runtime\.js\) is not built: run `npm run build`/),
    });
    expect(embedRuntimeWarning(root)).toMatch(
      /is not built: GET \/f\/\{slug\}\/embed\.js answers 503 until `npm run build`/,
    );
  });

  it('in this checkout equals a fresh compile of src/forms/hosted/embed.runtime.ts (test/global-setup.ts builds it when stale)', async () => {
    expect(await embedRuntime()).toBe(await compileEmbed(PACKAGE_ROOT));
  });

  it('the builder builds only a missing or stale runtime', async () => {
    const root = packageRoot('builder', { source: 1000 });
    fs.mkdirSync(path.join(root, 'scripts'));
    for (const file of EMBED_INPUTS.filter((f) => f !== EMBED_SOURCE)) {
      fs.copyFileSync(path.join(PACKAGE_ROOT, file), path.join(root, file));
      fs.utimesSync(path.join(root, file), 1000, 1000);
    }
    expect(await buildEmbedIfStale(root)).toBe(true);
    const code = fs.readFileSync(path.join(root, EMBED_OUTPUT), 'utf8');
    expect(code).toContain('compiled ');
    expect(() => new vm.Script(`(function (cfg) {${code}})`)).not.toThrow();
    expect(await buildEmbedIfStale(root)).toBe(false);
    fs.utimesSync(path.join(root, EMBED_SOURCE), Date.now() / 1000 + 60, Date.now() / 1000 + 60);
    expect(await buildEmbedIfStale(root)).toBe(true);
  });
});
