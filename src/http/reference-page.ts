import { escapeHtml as esc } from '../lib/html.js';

/**
 * The API reference at /docs: the OpenAPI document (/openapi.json) rendered on the server into one static page, made
 * once per document and served compressed. No script at all (its Content-Security-Policy allows none), nothing from
 * another host, Formcast's look (light and dark, following the reader's colour scheme), and a browser shows it at once:
 * the sections below the fold are not laid out until they are scrolled to (`content-visibility`), schemas and examples
 * are folded (`<details>`). A client-side renderer (Swagger UI before) took 8–9 s to show this document.
 *
 * The layout: a sidebar with every section (the operations' tags) and operation; for each operation its method, path,
 * `operationId`, summary, description (the CommonMark the *.docs.ts files use: paragraphs, lists, `code`, **bold**,
 * links), parameters, request body and answers, each with its schema (nested properties, `$ref`s linked to the
 * schemas at the end) and example.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'] as const;

interface Operation {
  method: string;
  path: string;
  op: Json;
  id: string;
}

// ---- text ------------------------------------------------------------------------------------------

/** Inline CommonMark: `code`, **bold**, [text](url) (http(s), relative and #anchors only); everything else is text. */
function inline(text: string): string {
  const parts = text.split(/(`[^`]+`)/g);
  return parts
    .map((p) => {
      if (p.length > 2 && p.startsWith('`') && p.endsWith('`')) return `<code>${esc(p.slice(1, -1))}</code>`;
      return esc(p)
        .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
        .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/|#)[^)\s]*)\)/g, '<a href="$2">$1</a>');
    })
    .join('');
}

/** Block CommonMark of the descriptions: paragraphs separated by a blank line, and `- ` lists. */
export function markdown(text: string | undefined): string {
  if (!text) return '';
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => /^\s*[-*] /.test(l) || /^\s{2,}\S/.test(l))) {
        const items: string[] = [];
        for (const l of lines) {
          if (/^\s*[-*] /.test(l)) items.push(l.replace(/^\s*[-*] /, ''));
          else items[items.length - 1] += ` ${l.trim()}`;
        }
        return `<ul>${items.map((i) => `<li>${inline(i)}</li>`).join('')}</ul>`;
      }
      return `<p>${inline(block.trim())}</p>`;
    })
    .join('\n');
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

// ---- schemas ---------------------------------------------------------------------------------------

const refName = (ref: string) => ref.replace(/^#\/components\/schemas\//, '');

/** A schema's type in a few words: `string`, `array of Contact`, `"DRAFT" | "SENT"`, `integer or null`. */
function typeOf(s: unknown): string {
  if (!isObject(s)) return 'any';
  if (typeof s.$ref === 'string') {
    const name = refName(s.$ref);
    return `<a href="#schema-${slug(name)}">${esc(name)}</a>`;
  }
  if (Array.isArray(s.enum)) return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ') || 'enum';
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  const alts = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null) as unknown[] | null;
  if (alts) return [...new Set(alts.map(typeOf))].join(' or ');
  const t = Array.isArray(s.type) ? s.type.join(' or ') : typeof s.type === 'string' ? s.type : null;
  if (t === 'array') return `array of ${typeOf(s.items)}`;
  if (t === 'object' && !isObject(s.properties) && isObject(s.additionalProperties))
    return `map of ${typeOf(s.additionalProperties)}`;
  if (!t && isObject(s.patternProperties)) return `map of ${typeOf(Object.values(s.patternProperties)[0])}`;
  return esc(t ?? (isObject(s.properties) ? 'object' : 'any'));
}

/** Constraints worth a reader's eye: lengths, bounds, pattern, format, default (as HTML). */
function constraints(s: Json): string {
  const c: string[] = [];
  const n = (v: unknown, none: string) => (v === undefined ? none : esc(String(v)));
  if (typeof s.format === 'string') c.push(`format ${esc(s.format)}`);
  if (s.minLength !== undefined || s.maxLength !== undefined)
    c.push(`${n(s.minLength, '0')}..${n(s.maxLength, '∞')} characters`);
  if (s.minimum !== undefined || s.maximum !== undefined) c.push(`${n(s.minimum, '−∞')}..${n(s.maximum, '∞')}`);
  if (s.minItems !== undefined || s.maxItems !== undefined)
    c.push(`${n(s.minItems, '0')}..${n(s.maxItems, '∞')} items`);
  if (s.maxProperties !== undefined) c.push(`at most ${n(s.maxProperties, '')} entries`);
  if (typeof s.pattern === 'string') c.push(`pattern <code>${esc(s.pattern)}</code>`);
  if (s.default !== undefined) c.push(`default <code>${esc(JSON.stringify(s.default))}</code>`);
  return c.length ? `<span class="c">${c.join(' · ')}</span>` : '';
}

/** The object a schema describes, looking through `X or null` and arrays of objects. */
function objectOf(s: unknown): Json | null {
  if (!isObject(s)) return null;
  if (isObject(s.properties)) return s;
  const alts = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : []) as unknown[];
  const objs = alts.map(objectOf).filter((x): x is Json => x !== null);
  if (objs.length === 1) return objs[0]!;
  if (s.type === 'array' || (Array.isArray(s.type) && s.type.includes('array'))) return objectOf(s.items);
  return null;
}

/** A schema as a list of its properties (nested objects inside, to `depth`). */
function schemaTree(s: unknown, depth = 0): string {
  const obj = objectOf(s);
  if (!obj || depth > 5) return '';
  const required = new Set(Array.isArray(obj.required) ? (obj.required as string[]) : []);
  const rows = Object.entries(obj.properties as Json).map(([name, p]) => {
    const prop = isObject(p) ? p : {};
    const nested = schemaTree(prop, depth + 1);
    return `<li><code class="n">${esc(name)}</code> <span class="t">${typeOf(prop)}</span>${required.has(name) ? ' <span class="req">required</span>' : ''} ${constraints(prop)}${typeof prop.description === 'string' ? `<div class="d">${inline(prop.description)}</div>` : ''}${nested}</li>`;
  });
  return rows.length ? `<ul class="props">${rows.join('')}</ul>` : '';
}

function schemaBlock(schema: unknown): string {
  if (!isObject(schema)) return '';
  const tree = schemaTree(schema);
  const head = `<div class="type">${typeOf(schema)} ${constraints(schema)}</div>`;
  return tree ? `${head}<details class="schema"><summary>Schema</summary>${tree}</details>` : head;
}

function example(media: Json): string {
  const value =
    media.example !== undefined
      ? media.example
      : isObject(media.examples)
        ? (Object.values(media.examples).find(isObject) as Json | undefined)?.value
        : undefined;
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return `<details class="example"><summary>Example</summary><pre><code>${esc(text)}</code></pre></details>`;
}

function contentBlock(content: unknown): string {
  if (!isObject(content)) return '';
  return Object.entries(content)
    .map(([type, media]) =>
      isObject(media)
        ? `<div class="media"><code class="mt">${esc(type)}</code>${schemaBlock(media.schema)}${example(media)}</div>`
        : '',
    )
    .join('');
}

// ---- operations ------------------------------------------------------------------------------------

function parametersTable(op: Json): string {
  const params = (Array.isArray(op.parameters) ? op.parameters : []).filter(isObject);
  if (!params.length) return '';
  const rows = params
    .map((p) => {
      const s = isObject(p.schema) ? p.schema : {};
      return `<tr><td><code>${esc(String(p.name))}</code>${p.required ? ' <span class="req">required</span>' : ''}</td><td>${esc(String(p.in))}</td><td>${typeOf(s)} ${constraints(s)}</td><td>${inline(String(p.description ?? s.description ?? ''))}${p.example !== undefined ? ` <span class="c">e.g. <code>${esc(String(p.example))}</code></span>` : ''}</td></tr>`;
    })
    .join('');
  return `<h4>Parameters</h4><div class="scroll"><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '301': 'Moved permanently',
  '302': 'Found (a redirect)',
  '303': 'See other (a redirect)',
};

/** A section's title from its tag: `api-keys` is "Api keys". */
const tagTitle = (tag: string) => {
  const words = tag.replace(/[-_]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : 'Other';
};

function operationHtml(o: Operation): string {
  const { op } = o;
  const body = isObject(op.requestBody) ? op.requestBody : null;
  const responses = isObject(op.responses) ? op.responses : {};
  const answers = Object.entries(responses)
    .map(([status, r]) => {
      if (!isObject(r)) return '';
      const kind = status.startsWith('2') || status.startsWith('3') ? 'ok' : 'err';
      // Fastify's placeholder for an answer nobody described: the status's own words instead.
      const said = String(r.description ?? '');
      const text = said && said !== 'Default Response' ? inline(said) : esc(STATUS_TEXT[status] ?? '');
      return `<div class="resp"><div><span class="status ${kind}">${esc(status)}</span> ${text}</div>${contentBlock(r.content)}</div>`;
    })
    .join('');
  const security = Array.isArray(op.security) && op.security.length === 0 ? '<span class="pill">no key</span>' : '';
  return `<section class="op" id="${esc(o.id)}" aria-labelledby="${esc(o.id)}-h">
<h3 id="${esc(o.id)}-h"><span class="m m-${o.method}">${o.method.toUpperCase()}</span> <code class="path">${esc(o.path)}</code> ${security}</h3>
<p class="summary">${inline(String(op.summary ?? ''))} <span class="opid">operationId <code>${esc(o.id)}</code></span></p>
${markdown(typeof op.description === 'string' ? op.description : '')}
${parametersTable(op)}
${body ? `<h4>Request body${body.required ? '' : ' (optional)'}</h4>${contentBlock(body.content)}` : ''}
<h4>Answers</h4>${answers}
</section>`;
}

// ---- the page --------------------------------------------------------------------------------------

const STYLE = `
:root { --bg:#f6f7f9; --surface:#fff; --surface-2:#f0f2f5; --border:#d5d9e0; --text:#1b1f26; --muted:#545d6b; --primary:#2f4fd6; --code:#eef0f4;
  --get:#17703a; --post:#2f4fd6; --put:#8a5300; --delete:#b42318; --other:#414957; color-scheme: light; }
@media (prefers-color-scheme: dark) { :root { --bg:#0f1218; --surface:#171b23; --surface-2:#212735; --border:#323a4a; --text:#e7eaf0; --muted:#a9b2c1;
  --primary:#93acff; --code:#212735; --get:#79d9a1; --post:#93acff; --put:#f2c062; --delete:#ff9a8f; --other:#c9d0db; color-scheme: dark; } }
*, *::before, *::after { box-sizing: border-box; }
html { scroll-padding-top: 1rem; }
body { margin: 0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--text); background: var(--bg); }
a { color: var(--primary); }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: .86em; }
code { background: var(--code); padding: .05em .3em; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: var(--code); padding: .75rem; border-radius: 6px; overflow: auto; max-height: 28rem; }
pre code { background: none; padding: 0; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; z-index: 9; background: var(--surface); padding: .5rem; }
.layout { display: grid; grid-template-columns: 290px minmax(0, 1fr); min-height: 100vh; }
nav.side { background: #161b26; color: #e7eaf0; position: sticky; top: 0; height: 100vh; overflow-y: auto; padding: 0 0 2rem; }
nav.side a { color: #d6dbe6; text-decoration: none; display: block; padding: .18rem 1rem; font-size: .86rem; overflow-wrap: anywhere; }
nav.side a:hover { background: #232a38; color: #fff; }
nav.side h2 { color: #a5aebf; font-size: .72rem; text-transform: uppercase; letter-spacing: .06em; margin: 1rem 0 .25rem; padding: 0 1rem; }
nav.side h2 a { color: inherit; padding: 0; display: inline; }
.brand { display: flex; align-items: center; gap: .5rem; padding: 1rem; font-weight: 700; font-size: 1.05rem; color: #fff; border-bottom: 1px solid #2a3140; }
.mark { width: 26px; height: 26px; border-radius: 7px; background: linear-gradient(135deg, #5b7cff, #2f4fd6); display: inline-grid; place-items: center; color: #fff; font-size: .9rem; }
.side .m { font-size: .62rem; min-width: 3.1rem; }
main { padding: 2rem clamp(1rem, 3vw, 3rem) 4rem; max-width: 1000px; }
header.intro h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
header.intro .links a { margin-right: 1rem; }
h2.tag { margin: 2.5rem 0 .5rem; font-size: 1.3rem; border-bottom: 1px solid var(--border); padding-bottom: .35rem; }
.op { background: var(--surface); border: 1px solid var(--border); border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; content-visibility: auto; contain-intrinsic-size: auto 420px; }
.op h3 { margin: 0 0 .35rem; font-size: 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
.op h4 { margin: 1rem 0 .35rem; font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.path { font-size: .95rem; background: none; padding: 0; }
.summary { margin: 0 0 .5rem; font-weight: 600; }
.opid { font-weight: 400; color: var(--muted); font-size: .82rem; margin-left: .5rem; }
.m { display: inline-block; font: 700 .7rem/1.6 ui-monospace, Menlo, Consolas, monospace; padding: 0 .4rem; border-radius: 4px; color: var(--surface); background: var(--other); text-align: center; }
.m-get { background: var(--get); } .m-post { background: var(--post); } .m-put, .m-patch { background: var(--put); } .m-delete { background: var(--delete); }
/* The sidebar is dark in both schemes: its badges take the dark scheme's colours. */
nav.side .m { color: #161b26; background: #c9d0db; } nav.side .m-get { background: #79d9a1; } nav.side .m-post { background: #93acff; }
nav.side .m-put, nav.side .m-patch { background: #f2c062; } nav.side .m-delete { background: #ff9a8f; }
.pill { font-size: .72rem; border: 1px solid var(--border); border-radius: 999px; padding: 0 .5rem; color: var(--muted); font-weight: 500; }
.req { font-size: .72rem; color: var(--delete); font-weight: 600; }
.c { color: var(--muted); font-size: .82rem; }
.t { color: var(--muted); font-size: .85rem; }
.d { color: var(--text); font-size: .88rem; margin: .1rem 0 .2rem; }
ul.props { list-style: none; margin: .3rem 0; padding-left: .9rem; border-left: 2px solid var(--border); }
ul.props li { margin: .3rem 0; }
.n { font-weight: 600; }
details { margin: .35rem 0; } summary { cursor: pointer; color: var(--primary); font-size: .88rem; }
.media { margin: .35rem 0 .6rem; } .mt { font-size: .8rem; }
.type { margin: .25rem 0; font-size: .9rem; }
.resp { border-top: 1px solid var(--border); padding: .45rem 0; }
.status { font: 700 .8rem ui-monospace, Menlo, Consolas, monospace; padding: 0 .35rem; border-radius: 4px; background: var(--surface-2); }
.status.ok { color: var(--get); } .status.err { color: var(--delete); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; min-width: 560px; font-size: .88rem; }
td:first-child code { white-space: nowrap; overflow-wrap: normal; }
th, td { text-align: left; border-bottom: 1px solid var(--border); padding: .35rem .5rem; vertical-align: top; }
section.schema-def { background: var(--surface); border: 1px solid var(--border); border-radius: 8px; padding: .75rem 1.25rem; margin: .75rem 0; content-visibility: auto; contain-intrinsic-size: auto 300px; }
@media (max-width: 860px) {
  .layout { display: block; }
  nav.side { position: static; height: auto; max-height: 50vh; }
  main { padding: 1rem .9rem 3rem; }
}
`;

/** The reference page of an OpenAPI document (every operation already has its operationId: http/operation-ids.ts). */
export function referencePage(doc: Json): string {
  const info = isObject(doc.info) ? doc.info : {};
  const paths = isObject(doc.paths) ? doc.paths : {};
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (isObject(op)) ops.push({ method, path, op, id: String(op.operationId ?? `${method}-${slug(path)}`) });
    }
  }
  // Sections in the order their first operation comes; the API (/v1) before the public pages and hooks.
  const byTag = new Map<string, Operation[]>();
  for (const o of [...ops.filter((x) => x.path.startsWith('/v1/')), ...ops.filter((x) => !x.path.startsWith('/v1/'))]) {
    const tag = Array.isArray(o.op.tags) && typeof o.op.tags[0] === 'string' ? o.op.tags[0] : 'Other';
    byTag.set(tag, [...(byTag.get(tag) ?? []), o]);
  }
  const schemas = isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  const nav = [...byTag]
    .map(
      ([tag, list]) =>
        `<h2><a href="#tag-${slug(tag)}">${esc(tagTitle(tag))}</a></h2>${list
          .map(
            (o) =>
              `<a href="#${esc(o.id)}"><span class="m m-${o.method}">${o.method.toUpperCase()}</span> ${esc(String(o.op.summary ?? o.path))}</a>`,
          )
          .join('')}`,
    )
    .join('');
  const sections = [...byTag]
    .map(
      ([tag, list]) =>
        `<h2 class="tag" id="tag-${slug(tag)}">${esc(tagTitle(tag))}</h2>${list.map(operationHtml).join('\n')}`,
    )
    .join('\n');
  const schemaDefs = Object.entries(schemas)
    .map(
      ([name, s]) =>
        `<section class="schema-def" id="schema-${slug(name)}"><h3>${esc(name)}</h3>${isObject(s) && typeof s.description === 'string' ? markdown(s.description) : ''}<div class="type">${typeOf({ ...(isObject(s) ? s : {}), $ref: undefined })}</div>${schemaTree(s)}</section>`,
    )
    .join('\n');
  const servers = (Array.isArray(doc.servers) ? doc.servers : []).filter(isObject).map((s) => String(s.url));
  const title = `${String(info.title ?? 'API')} reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<a class="skip" href="#main">Skip to the reference</a>
<div class="layout">
<nav class="side" aria-label="Operations">
<div class="brand"><span class="mark" aria-hidden="true">F</span>Formcast API</div>
<h2><a href="#main">Introduction</a></h2>
${nav}
${Object.keys(schemas).length ? `<h2><a href="#schemas">Schemas</a></h2>` : ''}
</nav>
<main id="main">
<header class="intro">
<h1>${esc(title)}</h1>
<p class="c">Version ${esc(String(info.version ?? ''))} · OpenAPI ${esc(String(doc.openapi ?? ''))} · ${ops.length} operations</p>
${markdown(typeof info.description === 'string' ? info.description : '')}
<p>Every <code>/v1</code> request carries an API key: <code>Authorization: Bearer fc_…</code> (<code>formcast workspace create</code> prints the first one). ${servers.length ? `Base URL: ${servers.map((u) => `<code>${esc(u)}</code>`).join(', ')}.` : ''} Errors are <code>application/problem+json</code> with a stable <code>code</code>: <a href="/docs/errors">every code and what it means</a>.</p>
<p class="links"><a href="/openapi.json">The OpenAPI document (JSON)</a><a href="/app">The console</a></p>
</header>
${sections}
${Object.keys(schemas).length ? `<h2 class="tag" id="schemas">Schemas</h2>${schemaDefs}` : ''}
</main>
</div>
</body>
</html>
`;
}
