import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITS, type Block } from '../../src/mail/blocks/grammar.js';
import { validateDocument } from '../../src/mail/blocks/validate.js';
import { documentArbitrary } from '../helpers/blocks.js';

/**
 * The block document's validator (src/mail/blocks/validate.ts): one error per violation at its exact JSON Pointer,
 * in a sentence; bad nesting and oversized documents refused at once, without recursion or a long walk.
 */
const doc = (blocks: unknown[], extra: Record<string, unknown> = {}) => ({
  type: 'formcast/blocks',
  version: 1,
  blocks,
  ...extra,
});
const paths = (value: unknown, base?: string) => validateDocument(value, base).map((e) => e.path);
const only = (value: unknown) => {
  const errors = validateDocument(value);
  expect(errors, JSON.stringify(errors)).toHaveLength(1);
  return errors[0]!;
};

describe('validateDocument', () => {
  it('accepts a document with every kind of block', () => {
    const blocks: Block[] = [
      {
        type: 'heading',
        text: 'Hello {{ contact.firstName | default: "there" }}',
        level: 2,
        align: 'center',
        id: 'b1',
      },
      {
        type: 'text',
        text: '<p>Some <b>bold</b>, <strong>strong</strong>, <i>i</i>, <em>em</em>, <u>u</u><br>and <a href="https://example.com">a link</a>.</p>',
      },
      {
        type: 'image',
        url: 'https://example.com/a.png',
        alt: 'A picture',
        width: 300,
        href: 'https://example.com',
        align: 'left',
      },
      { type: 'button', text: 'Go', url: 'mailto:hello@example.com', color: '#112233', textColor: '#FFFFFF' },
      { type: 'button', text: 'Not yet', url: '' },
      { type: 'divider', color: '#eeeeee' },
      { type: 'spacer', height: 24 },
      { type: 'social', links: [{ network: 'github', url: 'https://github.com/acme' }], align: 'right' },
      {
        type: 'html',
        html: '<table role="presentation" width="100%"><tr><td style="background:#eee;padding:8px">Hi</td></tr></table>',
      },
      {
        type: 'columns',
        widths: [30, 70],
        columns: [[{ type: 'text', text: 'Left' }], [{ type: 'image', url: 'https://example.com/b.png', alt: '' }]],
      },
      { type: 'footer', text: 'Why you get this' },
    ];
    const d = doc(blocks, { settings: { width: 560, brandColor: '#4f46e5', fontFamily: 'serif' } });
    expect(validateDocument(d)).toEqual([]);
  });

  it('names the document when it is not one, and its unknown fields', () => {
    expect(paths(null)).toEqual(['']);
    expect(paths([])).toEqual(['']);
    expect(paths({ type: 'other', version: 2, blocks: [] })).toEqual(['/type', '/version']);
    expect(paths(doc([], { html: '<p>x</p>' }))).toEqual(['/html']);
    expect(paths({ type: 'formcast/blocks', version: 1 })).toEqual(['/blocks']);
    expect(paths(doc([]), '/emailContent/editorContent')).toEqual([]);
    expect(paths({ type: 'formcast/blocks', version: 1, blocks: 'x' }, '/emailContent/editorContent')).toEqual([
      '/emailContent/editorContent/blocks',
    ]);
  });

  it('an unknown block type, an unknown field: at the pointer of the block field', () => {
    const e = only(
      doc([
        { type: 'heading', text: 'x' },
        { type: 'video', url: 'https://example.com' },
      ]),
    );
    expect(e.path).toBe('/blocks/1/type');
    expect(e.message).toContain('"video" is not a kind of block');
    expect(paths(doc([{ text: 'x' }]))).toEqual(['/blocks/0/type']);
    expect(paths(doc(['text']))).toEqual(['/blocks/0']);
    const f = only(doc([{ type: 'divider', colour: '#000000' }]));
    expect(f.path).toBe('/blocks/0/colour');
    expect(f.message).toBe('"colour" is not a field of a divider (color).');
    expect(paths(doc([{ type: 'heading', text: 'x', 'a/b': 1 }]), '/e')).toEqual(['/e/blocks/0/a~1b']);
    expect(paths(doc([{ type: 'heading' }]))).toEqual(['/blocks/0/text']);
    expect(paths(doc([{ type: 'heading', text: 'x', level: 4 }]))).toEqual(['/blocks/0/level']);
    expect(paths(doc([{ type: 'spacer', height: 1 }]))).toEqual(['/blocks/0/height']);
    expect(paths(doc([{ type: 'image', url: 'https://example.com/a.png', alt: 'a', width: 601 }]))).toEqual([
      '/blocks/0/width',
    ]);
    expect(paths(doc([{ type: 'heading', text: 'x', id: '' }]))).toEqual(['/blocks/0/id']);
    expect(paths(doc([{ type: 'heading', text: 'x', align: 'justify' }]))).toEqual(['/blocks/0/align']);
  });

  it('bad colours, in the settings and in blocks', () => {
    const errors = validateDocument(
      doc([{ type: 'button', text: 'Go', url: 'https://example.com', color: 'red', textColor: '#fff' }], {
        settings: { brandColor: 'blue', backgroundColor: '#00000g', width: 700, fontFamily: 'comic', extra: 1 },
      }),
    );
    expect(errors.map((e) => e.path)).toEqual([
      '/settings/brandColor',
      '/settings/backgroundColor',
      '/settings/width',
      '/settings/fontFamily',
      '/settings/extra',
      '/blocks/0/color',
      '/blocks/0/textColor',
    ]);
    expect(errors[0]!.message).toBe('The colour "blue" must be written #rrggbb, e.g. #1f6feb.');
  });

  it('a columns block inside a column is one error at its pointer', () => {
    const e = only(
      doc([
        {
          type: 'columns',
          columns: [[{ type: 'text', text: 'a' }], [{ type: 'columns', columns: [[], []] }]],
        },
      ]),
    );
    expect(e).toEqual({
      path: '/blocks/0/columns/1/0',
      message: 'A columns block cannot go inside a column: a column holds the other kinds of blocks.',
    });
  });

  it('a document nested 100 levels deep (and 100,000) is one clear error, not a stack overflow', () => {
    const nest = (depth: number) => {
      let inner: unknown = { type: 'text', text: 'bottom' };
      for (let i = 0; i < depth; i++) inner = { type: 'columns', columns: [[inner], []] };
      return doc([inner]);
    };
    expect(validateDocument(nest(100))).toEqual([
      {
        path: '/blocks/0/columns/0/0',
        message: 'A columns block cannot go inside a column: a column holds the other kinds of blocks.',
      },
    ]);
    // 100,000 levels: the same one error, not a stack overflow (the walk keeps its own stack).
    expect(paths(nest(100_000))).toEqual(['/blocks/0/columns/0/0']);
  });

  it('more than LIMITS.blocks blocks (columns included) is one error, found at once', () => {
    // "At once": counted before any block is checked, so no spacer's (bad) height is ever read. Counted by the
    // reads themselves, not by a clock (a timing bound here failed on a busy CI machine).
    let heightsRead = 0;
    const spacer = () =>
      new Proxy({ type: 'spacer', height: 'x' } as Record<string, unknown>, {
        get: (target, key) => {
          if (key === 'height') heightsRead++;
          return target[key as string];
        },
      });
    const many = doc(Array.from({ length: 10_000 }, spacer));
    const errors = validateDocument(many);
    expect(errors).toEqual([
      { path: '/blocks', message: 'The email has 10000 blocks; it may have at most 500 (those in columns included).' },
    ]);
    expect(heightsRead).toBe(0);
    // The same proxies under the limit are checked: the count above is not a proxy that is never read.
    expect(validateDocument(doc(Array.from({ length: 3 }, spacer))).length).toBeGreaterThan(0);
    expect(heightsRead).toBeGreaterThan(0);
    const text = { type: 'text', text: 'x' };
    const columns = { type: 'columns', columns: [Array(50).fill(text), Array(50).fill(text)] };
    expect(paths(doc(Array(5).fill(columns)))).toEqual(['/blocks']); // 5 + 500 blocks
    expect(paths(doc(Array(4).fill(columns)))).toEqual([]);
    expect(paths(doc([{ type: 'columns', columns: [Array(51).fill(text), []] }]))).toEqual(['/blocks/0/columns/0']);
    expect(paths(doc([{ type: 'columns', columns: [[]] }]))).toEqual(['/blocks/0/columns']);
    expect(paths(doc([{ type: 'columns', columns: [[], []], widths: [50, 40] }]))).toEqual(['/blocks/0/widths']);
    expect(paths(doc([{ type: 'columns', columns: [[], []], widths: [50, 30, 20] }]))).toEqual(['/blocks/0/widths']);
  });

  it('text longer than LIMITS.text, an html block over LIMITS.html, a document over LIMITS.documentBytes', () => {
    expect(paths(doc([{ type: 'heading', text: 'x'.repeat(LIMITS.text + 1) }]))).toEqual(['/blocks/0/text']);
    expect(paths(doc([{ type: 'heading', text: '😀'.repeat(LIMITS.text) }]))).toEqual([]); // code points
    expect(paths(doc([{ type: 'html', html: 'x'.repeat(LIMITS.html + 1) }]))).toEqual(['/blocks/0/html']);
    const big = doc(Array.from({ length: 9 }, () => ({ type: 'html', html: `<p>${'x'.repeat(LIMITS.html - 8)}</p>` })));
    const e = only(big);
    expect(e.path).toBe('');
    expect(e.message).toMatch(/^The email document is 2\.\d MiB as JSON; it may be at most 2\.0 MiB\.$/);
  });

  it('URLs: absolute http(s), mailto: for links and buttons, or Liquid', () => {
    const image = (url: string) => doc([{ type: 'image', url, alt: 'a' }]);
    const button = (url: string) => doc([{ type: 'button', text: 'Go', url }]);
    for (const ok of [
      'https://example.com/a.png',
      'http://example.com/a.png?x=1&y=2',
      '{{ contact.properties.photo }}',
      'https://example.com/{{ contact.id }}.png',
    ])
      expect(paths(image(ok)), ok).toEqual([]);
    for (const bad of [
      '/a.png',
      'example.com/a.png',
      'javascript:alert(1)',
      'mailto:a@example.com',
      'ftp://x.example/a',
      'https://exa mple.com',
      '',
    ])
      expect(paths(image(bad)), bad).toEqual(['/blocks/0/url']);
    for (const ok of [
      'https://example.com',
      'mailto:hello@example.com?subject=Hi',
      '{{ contact.properties.link }}',
      '',
    ])
      expect(paths(button(ok)), ok).toEqual([]);
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,x', '//example.com', 'tel:123'])
      expect(paths(button(bad)), bad).toEqual(['/blocks/0/url']);
    const e = only(button('javascript:alert(1)'));
    expect(e.message).toBe(
      'The button\'s link "javascript:alert(1)" is not a web address starting with https:// or http://, a mailto: address, or Liquid such as {{ contact.properties.link }}.',
    );
    expect(paths(doc([{ type: 'image', url: 'https://example.com/a.png', alt: 'a', href: 'javascript:x' }]))).toEqual([
      '/blocks/0/href',
    ]);
    expect(
      paths(
        doc([
          {
            type: 'social',
            links: [
              { network: 'x', url: 'https://x.com/a' },
              { network: 'x', url: 'mailto:a@example.com' },
            ],
          },
        ]),
      ),
    ).toEqual(['/blocks/0/links/1/url']);
    expect(paths(doc([{ type: 'social', links: [{ network: 'myspace', url: 'https://example.com' }] }]))).toEqual([
      '/blocks/0/links/0/network',
    ]);
    expect(paths(doc([{ type: 'social', links: Array(13).fill({ network: 'x', url: 'https://x.com/a' }) }]))).toEqual([
      '/blocks/0/links',
    ]);
  });

  it("a text block's inline HTML: b, strong, i, em, u, a[href], br, p only; the rest named", () => {
    const text = (t: string) =>
      validateDocument(
        doc([
          { type: 'heading', text: 'x' },
          { type: 'text', text: t },
        ]),
      );
    expect(text('<p>a <b>b</b> <a href="https://example.com" target="_blank" rel="noopener">c</a></p>')).toEqual([]);
    expect(text('{% if contact.properties.score > 3 %}a < b & c{% endif %}')).toEqual([]);
    expect(text('<a href="{{ contact.properties.link }}">x</a>')).toEqual([]);
    expect(text('<span>x</span>')).toEqual([
      {
        path: '/blocks/1/text',
        message:
          'The text contains a <span> element: a text block keeps bold, italic, underline, links, line breaks and paragraphs only (b, strong, i, em, u, a, br, p).',
      },
    ]);
    expect(text('<b class="x">y</b>')).toEqual([
      {
        path: '/blocks/1/text',
        message: 'The text\'s <b> element has a "class" attribute: formatting in a text block carries no attributes.',
      },
    ]);
    expect(text('<a href="https://example.com" style="color:red">y</a>')[0]!.message).toBe(
      'A link in the text has a "style" attribute: links in a text block keep only their address (href).',
    );
    const js = text('<a href="javascript:alert(1)">y</a>');
    expect(js.map((e) => e.path)).toEqual(['/blocks/1/text']);
    expect(js[0]!.message).toBe(
      'A link in the text points to "javascript:alert(1)", which is not a web address starting with https:// or http://, a mailto: address, or Liquid such as {{ contact.properties.link }}.',
    );
    // one error per kind of violation, each named once
    expect(
      text('<span>a</span><span>b</span><img src="https://example.com/a.png"><b onclick="x">c</b>').map((e) =>
        e.message.slice(0, 40),
      ),
    ).toEqual([
      'The text contains a <span> element: a te',
      'The text contains a <img> element: a tex',
      'The text\'s <img> element has a "src" att',
      'The text\'s <b> element has a "onclick" a',
    ]);
    expect(text(`${'<b>'.repeat(40)}deep${'</b>'.repeat(40)}`).map((e) => e.message)).toEqual([
      'The text nests its formatting more than 32 levels deep.',
    ]);
  });

  it('html blocks: a script, an event handler or a javascript: URL is no error (it is removed: sanitize tests)', () => {
    const html = (h: string) => validateDocument(doc([{ type: 'html', html: h }]), '/emailContent/editorContent');
    expect(
      html(
        '<div style="color:#333"><a href="https://example.com">x</a><img src="https://example.com/a.png" alt=""></div>',
      ),
    ).toEqual([]);
    for (const source of [
      '<p>x</p><script>alert(1)</script>',
      '<img src="https://example.com/a.png" onerror="alert(1)">',
      '<a href="javascript:alert(1)">x</a>',
      '<iframe src="https://example.com"></iframe>',
      '<style>p{color:red}</style>',
      '<form action="https://example.com"><input></form>',
      '<svg><circle r="1"/></svg>',
      '<!--[if mso]><script>alert(1)</script><![endif]-->',
    ])
      expect(html(source), source).toEqual([]);
    // What is not about the HTML's content stays an error: the nesting limit, the size, Liquid that does not parse.
    expect(html(`${'<div>'.repeat(150)}x`)).toEqual([
      {
        path: '/emailContent/editorContent/blocks/0/html',
        message: 'The HTML nests elements more than 100 levels deep.',
      },
    ]);
  });

  it('Liquid that does not parse is refused at its field', () => {
    const e = only(doc([{ type: 'heading', text: 'Hi {% if contact.firstName %}' }]));
    expect(e.path).toBe('/blocks/0/text');
    expect(e.message).toMatch(/^The Liquid in the heading's text does not parse: /);
    expect(paths(doc([{ type: 'button', text: 'Go', url: 'https://example.com/{{ x | nope }}' }]))).toEqual([
      '/blocks/0/url',
    ]);
    expect(paths(doc([{ type: 'html', html: '<p>{% for %}</p>' }]))).toEqual(['/blocks/0/html']);
  });

  it('unclosed Liquid ({{ or {% without its end) is refused at its field, in every field that holds Liquid', () => {
    const t = only(doc([{ type: 'text', text: 'Hi {{ contact.firstName' }]));
    expect(t.path).toBe('/blocks/0/text');
    expect(t.message).toMatch(/^The Liquid in the text block's text does not parse: /);
    expect(paths(doc([{ type: 'text', text: '<p>Hi {% if contact.firstName </p>' }]))).toEqual(['/blocks/0/text']);
    expect(
      paths(
        doc([
          { type: 'heading', text: 'Hi {{ contact.firstName' },
          { type: 'image', url: 'https://example.com/{{ id.png', alt: 'A {% if', href: 'https://example.com/{{' },
          { type: 'button', text: 'Go {{', url: 'https://example.com/{%' },
          { type: 'social', links: [{ network: 'x', url: 'https://x.com/{{ contact.properties.x' }] },
          { type: 'html', html: '<p>Hi {{ contact.firstName</p>' },
          { type: 'footer', text: 'Sent to {{ contact.email' },
        ]),
      ),
    ).toEqual([
      '/blocks/0/text',
      '/blocks/1/url',
      '/blocks/1/alt',
      '/blocks/1/href',
      '/blocks/2/text',
      '/blocks/2/url',
      '/blocks/3/links/0/url',
      '/blocks/4/html',
      '/blocks/5/text',
    ]);
    // in a column too, at the nested block's field
    expect(
      paths(
        doc([
          {
            type: 'columns',
            columns: [
              [{ type: 'text', text: 'ok' }],
              [
                { type: 'heading', text: 'x' },
                { type: 'text', text: '{{ a' },
              ],
            ],
          },
        ]),
        '/editorContent',
      ),
    ).toEqual(['/editorContent/blocks/0/columns/1/1/text']);
    // braces that are not Liquid are text
    expect(paths(doc([{ type: 'text', text: 'a { b } c }} d' }]))).toEqual([]);
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 6 }), (value) => {
        expect(Array.isArray(validateDocument(value))).toBe(true);
        expect(Array.isArray(validateDocument({ type: 'formcast/blocks', version: 1, blocks: [value] }))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('accepts every document the grammar generates', () => {
    fc.assert(
      fc.property(documentArbitrary(), (d) => {
        expect(validateDocument(d)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
