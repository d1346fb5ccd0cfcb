import fc from 'fast-check';
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { describe, expect, it } from 'vitest';
import { Liquid } from 'liquidjs';
import { LIQUID_OPTIONS, liquid } from '../../src/lib/liquid.js';
import type { Block, BlockDocument } from '../../src/mail/blocks/grammar.js';
import { documentWarnings, renderDocument } from '../../src/mail/blocks/render.js';
import { sanitizeDocument } from '../../src/mail/blocks/sanitize.js';
import { validateDocument } from '../../src/mail/blocks/validate.js';
import { GALLERY } from '../../src/mail-setup/templates/templates.gallery.js';
import { LIQUID_SCOPE, LIQUID_SNIPPETS, documentArbitrary } from '../helpers/blocks.js';

/**
 * The block document renderer (src/mail/blocks/render.ts, MJML underneath): every kind of block and their
 * combinations make email-client-safe HTML (a real parser reads it without an error, no script, handler or
 * javascript: URL, alt and an absolute src on every image, the footer with its Liquid), Liquid survives byte for byte
 * and personalises, and the text part reads as the blocks do.
 */
type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];
const PUBLIC_URL = 'https://mail.acme.example';
const doc = (blocks: Block[], settings?: BlockDocument['settings']): BlockDocument => ({
  type: 'formcast/blocks',
  version: 1,
  ...(settings ? { settings } : {}),
  blocks,
});

/** The HTML parsed by parse5: its parse errors and its elements (comments' content is not looked into). */
function parsed(html: string): { errors: string[]; elements: Element[] } {
  const errors: string[] = [];
  const root = parse(html, { onParseError: (e) => errors.push(`${e.code} at ${e.startOffset}`) }) as unknown as Node;
  const elements: Element[] = [];
  const stack: Node[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if ('tagName' in n) elements.push(n as Element);
    if ('childNodes' in n) stack.push(...(n.childNodes as Node[]));
    if ('content' in n) stack.push((n as unknown as { content: Node }).content);
  }
  return { errors, elements };
}
const attrOf = (el: Element, name: string) => el.attrs.find((a) => a.name === name)?.value;

/** What every rendered email must be (contract §16), checked on the HTML a recipient gets (Liquid filled in). */
function expectEmailSafe(html: string): void {
  const { errors, elements } = parsed(html);
  expect(errors, 'parse errors').toEqual([]);
  expect(html).toMatch(/^<!doctype html>/i);
  expect(html).not.toMatch(/<script|<link\b|@import|javascript:|fonts\.googleapis/i);
  for (const el of elements) {
    expect(el.tagName).not.toBe('script');
    for (const a of el.attrs) {
      expect(a.name.startsWith('on'), `${el.tagName} ${a.name}`).toBe(false);
      expect(a.value, `${el.tagName} ${a.name}`).not.toMatch(/^\s*(javascript|vbscript|data):/i);
    }
    if (el.tagName === 'img') {
      expect(attrOf(el, 'alt'), 'alt').toBeTypeOf('string');
      expect(attrOf(el, 'src'), 'src').toMatch(/^https?:\/\/[^/]+/);
    }
  }
  expect(html).toContain('Acme Inc., 1 Main Street, Springfield');
  expect(html).toContain(`href="${LIQUID_SCOPE.unsubscribe_url}"`);
  const content = elements.filter((e) => /^mj-column-per-/.test(attrOf(e, 'class') ?? ''));
  for (const c of content) expect(attrOf(c, 'style')).toContain('display:inline-block');
}

// The engine's settings without its wall-clock render limit, which a loaded CI machine can reach on a large generated
// document (time the render did not use); the limit itself is tested in test/unit/liquid*.
const liquidHtml = new Liquid({ ...LIQUID_OPTIONS, outputEscape: 'escape', renderLimit: Infinity });
const personalise = (html: string) => liquidHtml.parseAndRenderSync(html, LIQUID_SCOPE) as string;

describe('renderDocument', () => {
  it('renders every kind of block, email-client safe', async () => {
    const d = doc([
      { type: 'heading', text: 'Big <news> & more', level: 1 },
      { type: 'heading', text: 'Smaller', level: 2, align: 'center' },
      { type: 'heading', text: 'Smallest', level: 3 },
      {
        type: 'text',
        text: '<p>One <b>bold</b> <a href="https://example.com/a?x=1&y=2" target="_blank">link</a></p><p>Two<br>lines</p>',
      },
      {
        type: 'image',
        url: 'https://example.com/a.png',
        alt: 'A chart of sales',
        width: 320,
        href: 'https://example.com/sales',
      },
      { type: 'button', text: 'Read more', url: 'https://example.com/more', color: '#d63384' },
      { type: 'divider', color: '#cccccc' },
      { type: 'spacer', height: 40 },
      {
        type: 'columns',
        columns: [
          [{ type: 'text', text: 'Left' }],
          [{ type: 'text', text: 'Middle' }],
          [{ type: 'image', url: 'https://example.com/b.png', alt: 'Right' }],
        ],
      },
      {
        type: 'social',
        links: [
          { network: 'mastodon', url: 'https://example.social/@acme' },
          { network: 'website', url: 'https://example.com' },
        ],
      },
      { type: 'html', html: '<table role="presentation"><tr><td style="padding:4px">Raw cell</td></tr></table>' },
      { type: 'footer', text: 'You get this because you signed up.' },
    ]);
    expect(validateDocument(d)).toEqual([]);
    const { html, text, warnings } = await renderDocument(d, { publicUrl: PUBLIC_URL, title: 'News', lang: 'en' });
    expectEmailSafe(personalise(html));
    expect(warnings).toEqual([]);
    expect(html).toContain('<html lang="en"');
    expect(html).toContain('<title>News</title>');
    expect(html).toContain('>Big &lt;news&gt; &amp; more</h1>');
    expect(html).toMatch(/<h2 style="[^"]*font-size:24px/);
    expect(html).toContain('<h3 ');
    expect(html).toContain(
      '<a href="https://example.com/a?x=1&amp;y=2" style="color:#1f6feb;text-decoration:underline" target="_blank">link</a>',
    );
    expect(html).toContain('Two<br>lines');
    expect(html).toMatch(/<img alt="A chart of sales" src="https:\/\/example\.com\/a\.png"[^>]*width="320"/);
    expect(html).toContain('href="https://example.com/sales"');
    // a bulletproof button: a table cell with the colour, the link inside
    expect(html).toMatch(
      /<td align="center" bgcolor="#d63384" role="presentation"[^>]*>\n?<a href="https:\/\/example\.com\/more"/,
    );
    expect(html).toContain('border-top:solid 1px #cccccc');
    expect(html).toContain('height:40px');
    expect(html).toContain('mj-column-per-33-33');
    expect(html).toContain(`src="${PUBLIC_URL}/assets/social/mastodon.png"`);
    expect(html).toContain('alt="Mastodon"');
    expect(html).toContain('<td style="padding:4px">Raw cell</td>');
    expect(html).toContain('You get this because you signed up.');
    // width and dark-mode hints, no external resource
    expect(html).toContain('max-width:600px');
    expect(html).toContain('<meta name="color-scheme" content="light dark">');
    expect(html).toContain('<meta name="supported-color-schemes" content="light dark">');
    expect(html).toContain('@media (prefers-color-scheme: dark)');
    expect(html.match(/\{\{ unsubscribe_url \}\}/g)).toHaveLength(1);
    expect(text).toBe(
      [
        'Big <news> & more',
        'Smaller',
        'Smallest',
        'One bold link (https://example.com/a?x=1&y=2)\n\nTwo\nlines',
        'A chart of sales (https://example.com/sales)',
        'Read more: https://example.com/more',
        '----------',
        'Left',
        'Middle',
        'Right',
        'Mastodon: https://example.social/@acme\nWebsite: https://example.com',
        'Raw cell',
        'You get this because you signed up.\n{{ workspace.postal_address }}\n{% if unsubscribe_url %}Unsubscribe: {{ unsubscribe_url }}{% endif %}',
      ].join('\n\n'),
    );
  });

  it('stacks columns under 480 px and keeps the width of the settings', async () => {
    const { html } = await renderDocument(
      doc(
        [
          {
            type: 'columns',
            widths: [30, 70],
            columns: [[{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }]],
          },
        ],
        { width: 480, backgroundColor: '#000000', contentBackgroundColor: '#fafafa', fontFamily: 'serif' },
      ),
    );
    expect(html).toContain('@media only screen and (min-width:480px)');
    expect(html).toContain('.mj-column-per-30 { width:30% !important; max-width: 30%; }');
    expect(html).toContain('max-width:480px');
    expect(html).toContain('font-family:Georgia, &#39;Times New Roman&#39;, serif');
    expect(html).toContain('background-color:#000000');
  });

  it('a document without a footer gets one (an info warning); no lang unless given', async () => {
    const { html, text, warnings } = await renderDocument(doc([{ type: 'text', text: 'Hello' }]));
    expect(warnings).toEqual([
      {
        path: '',
        code: 'footer_missing',
        level: 'info',
        message:
          'The email has no footer block, so one is added at its end with your postal address and the unsubscribe link.',
      },
    ]);
    expect(html).toContain('{{ workspace.postal_address }}');
    expect(html).toContain('<a href="{{ unsubscribe_url }}"');
    expect(html).not.toMatch(/ lang=/);
    expect(html).not.toContain('aria-label=""');
    expect(text).toBe(
      'Hello\n\n{{ workspace.postal_address }}\n{% if unsubscribe_url %}Unsubscribe: {{ unsubscribe_url }}{% endif %}',
    );
    const de = await renderDocument(doc([{ type: 'footer' }]), { lang: 'de' });
    expect(de.html).toContain('<html lang="de"');
    expect(de.html).toContain('>Abmelden</a>');
    expect(de.text).toContain('Abmelden: {{ unsubscribe_url }}');
    expect(de.warnings).toEqual([]);
    // a footer in a column counts
    const inColumn = await renderDocument(doc([{ type: 'columns', columns: [[{ type: 'footer' }], []] }]));
    expect(inColumn.warnings).toEqual([]);
    expect(inColumn.html.match(/\{\{ unsubscribe_url \}\}/g)).toHaveLength(1);
  });

  it('an empty alt stays alt="" with a warning; other warnings point at their blocks', async () => {
    const d = doc([
      { type: 'image', url: 'https://example.com/a.png', alt: '' },
      { type: 'button', text: 'Go', url: '' },
      { type: 'heading', text: ' ' },
      { type: 'text', text: '<p></p>' },
      { type: 'columns', columns: [[], [{ type: 'image', url: '{{ contact.properties.photo }}', alt: 'x' }]] },
      { type: 'social', links: [] },
      { type: 'html', html: '' },
      { type: 'footer' },
    ]);
    const { html, warnings } = await renderDocument(d);
    expect(html).toMatch(/<img alt="" src="https:\/\/example\.com\/a\.png"/);
    expect(warnings.map((w) => `${w.path} ${w.code}`)).toEqual([
      '/blocks/0 image_alt_missing',
      '/blocks/1 button_link_missing',
      '/blocks/2 block_empty',
      '/blocks/3 block_empty',
      '/blocks/4/columns/1/0 image_not_absolute',
      '/blocks/5 block_empty',
      '/blocks/6 block_empty',
    ]);
    expect(documentWarnings(d)).toEqual(warnings);
    // a button without a link is still a button, with no href
    expect(html).toMatch(/<p style="display:inline-block;background:#1f6feb[^"]*"\s*>\s*Go\s*<\/p>/);
  });

  it('plain text keeps its line breaks; in HTML a line break is white space', async () => {
    const plain = await renderDocument(
      doc([{ type: 'text', text: 'Line 1\nLine 2 & more\n\nA paragraph' }, { type: 'footer' }]),
    );
    expect(plain.html).toContain(
      '<p style="margin:0 0 16px">Line 1<br>Line 2 &amp; more</p><p style="margin:0 0 0px">A paragraph</p>',
    );
    expect(plain.text.startsWith('Line 1\nLine 2 & more\n\nA paragraph\n\n')).toBe(true);
    const pretty = await renderDocument(
      doc([{ type: 'text', text: '<p>\n  Some <b>bold</b>\n  text\n</p>\n<p>Next</p>' }, { type: 'footer' }]),
    );
    expect(pretty.html).toContain(
      '<p style="margin:0 0 16px"> Some <b>bold</b> text </p> <p style="margin:0 0 0px">Next</p>',
    );
    expect(pretty.text.startsWith('Some bold text\n\nNext\n\n')).toBe(true);
  });

  it('social links are text links without a public URL', async () => {
    const { html, text } = await renderDocument(
      doc([
        {
          type: 'social',
          links: [
            { network: 'x', url: 'https://x.com/acme' },
            { network: 'github', url: 'https://github.com/acme' },
          ],
        },
      ]),
    );
    expect(html).not.toContain('<img');
    expect(html).toContain(
      '<a href="https://x.com/acme" style="color:#1f6feb;text-decoration:underline" target="_blank">X</a> &middot; <a href="https://github.com/acme"',
    );
    expect(text).toContain('X: https://x.com/acme\nGitHub: https://github.com/acme');
  });

  it("the footer's unsubscribe line is printed only where the message has an unsubscribe URL (a confirmation has none)", async () => {
    const { html, text } = await renderDocument(doc([{ type: 'text', text: 'Please confirm' }, { type: 'footer' }]));
    const scope = { workspace: { name: 'Acme', postal_address: '1 Main St' } };
    const without = { html: liquidHtml.parseAndRenderSync(html, scope), text: liquid.parseAndRenderSync(text, scope) };
    expect(without.html).toContain('1 Main St');
    expect(without.html).not.toMatch(/Unsubscribe|href=""/);
    expect(without.text).not.toContain('Unsubscribe');
    const withUrl = liquidHtml.parseAndRenderSync(html, { ...scope, unsubscribe_url: 'https://x.example/u/1' });
    expect(withUrl).toContain('href="https://x.example/u/1"');
  });

  it('Liquid survives byte for byte and personalises the stored output', async () => {
    const tricky = '{{ contact.firstName | default: "there & <you>" }}';
    const cond = '{% if contact.properties.plan == "pro" and 2 > 1 %}Pro{% else %}Free{% endif %}';
    const d = doc([
      { type: 'heading', text: `Hi ${tricky}` },
      { type: 'text', text: `<p>${cond} plan. <a href="{{ contact.properties.link }}">Your page</a></p>` },
      {
        type: 'button',
        text: 'Open {{ contact.properties.plan | upcase }}',
        url: 'https://example.com/p?id={{ contact.properties.id }}&x=1',
      },
      {
        type: 'image',
        url: 'https://example.com/{{ contact.properties.id }}.png',
        alt: 'Photo of {{ contact.firstName }}',
        href: '{{ contact.properties.link }}',
      },
      { type: 'social', links: [{ network: 'website', url: '{{ contact.properties.link }}' }] },
      { type: 'html', html: '<p data-x="1">{{ contact.email }} {% raw %}{{ kept }}{% endraw %}</p>' },
      { type: 'footer', text: 'Sent to {{ contact.email }}' },
    ]);
    expect(validateDocument(d)).toEqual([]);
    const { html, text } = await renderDocument(d, { publicUrl: PUBLIC_URL, title: 'For {{ contact.firstName }}' });
    for (const piece of [
      tricky,
      cond,
      '{{ contact.properties.link }}',
      '{{ contact.properties.plan | upcase }}',
      'https://example.com/p?id={{ contact.properties.id }}&amp;x=1',
      '{{ contact.email }}',
      '{% raw %}{{ kept }}{% endraw %}',
      '<title>For {{ contact.firstName }}</title>',
    ])
      expect(html, piece).toContain(piece);
    const out = personalise(html);
    expectEmailSafe(out);
    expect(out).toContain('Hi Ada &lt;Lovelace&gt;</h1>');
    expect(out).toContain('Pro plan.');
    expect(out).toContain('<a href="https://example.com/ada" style=');
    expect(out).toContain('Open PRO');
    expect(out).toContain('href="https://example.com/p?id=c1&amp;x=1"');
    expect(out).toContain('src="https://example.com/c1.png"');
    expect(out).toContain('alt="Photo of Ada &lt;Lovelace&gt;"');
    expect(out).toContain('ada@example.com {{ kept }}');
    expect(out).toContain('Sent to ada@example.com');
    const plain = liquid.parseAndRenderSync(text, LIQUID_SCOPE) as string;
    expect(plain).toContain('Hi Ada <Lovelace>');
    expect(plain).toContain('Pro plan. Your page (https://example.com/ada)');
    expect(plain).toContain('Open PRO: https://example.com/p?id=c1&x=1');
    expect(plain).toContain('Website: https://example.com/ada');
    expect(plain).toContain(
      'Acme Inc., 1 Main Street, Springfield\nUnsubscribe: https://mail.example.com/unsubscribe/tok123',
    );
  });

  it("html blocks are sanitised like a form's deployed HTML: what is unsafe is removed, named in warnings", async () => {
    const unsafe = [
      '<p style="color:#333;padding:4px">Kept <b>bold</b> <a href="https://example.com/a" target="_blank">link</a></p>',
      '<script>alert(1)</script>',
      '<img src="https://example.com/i.png" alt="x" onerror="alert(1)">',
      '<a href="javascript:alert(1)">js</a>',
      '<iframe src="https://example.com/frame"></iframe>',
      '<form action="https://example.com/post"><label>Q <input name="q"></label><button>Send</button></form>',
      '<style>p{color:red}</style><link rel="stylesheet" href="https://example.com/a.css">',
      '<div style="background:url(javascript:alert(1))">bg</div>',
      '<table><tr><td {% if contact.firstName %}onclick="alert(2)"{% endif %} o{{ x }}nclick="alert(3)">cell</td></tr></table>',
    ].join('');
    const d = doc([
      { type: 'html', html: unsafe },
      { type: 'columns', columns: [[{ type: 'html', html: '<b onmouseover="alert(4)">in a column</b>' }], []] },
      { type: 'html', html: '<p>Clean {{ contact.email }}</p><!-- a note -->' },
      { type: 'footer' },
    ]);
    expect(validateDocument(d)).toEqual([]);
    const { html, warnings } = await renderDocument(d, { publicUrl: PUBLIC_URL });
    const out = personalise(html);
    expectEmailSafe(out);
    const body = out.slice(out.indexOf('<body'));
    expect(body).not.toMatch(/<script|<style|<link|<iframe|<form|<input|<button|\son\w+=|javascript:|alert\(/i);
    expect(body).toContain(
      '<p style="color:#333;padding:4px">Kept <b>bold</b> <a href="https://example.com/a" target="_blank">link</a></p>',
    );
    expect(body).toContain('<img src="https://example.com/i.png" alt="x">');
    expect(body).toContain('<a>js</a>');
    expect(body).toContain('Q Send'); // a form's text stays, its controls go
    expect(body).toContain('<div>bg</div>');
    expect(body).toMatch(/<td\s+>cell<\/td>/);
    expect(body).toContain('<b>in a column</b>');

    const sanitized = warnings.filter((w) => w.code === 'html_sanitized');
    expect(sanitized.every((w) => w.level === 'warning')).toBe(true);
    expect(sanitized.filter((w) => w.path === '/blocks/0').map((w) => w.message)).toEqual([
      'The <script> element was removed from the HTML: email clients never run scripts.',
      "The <img> element's event handler (onerror) was removed from the HTML: email clients never run scripts.",
      "The <a> element's href was removed from the HTML: it pointed to a javascript: address (email clients never run scripts).",
      'The <iframe> element was removed from the HTML, with its content: email clients do not show it, so use text, links, images and tables.',
      'The <form> element was removed from the HTML (its content was kept): email clients do not show it, so use text, links, images and tables.',
      'The <label> element was removed from the HTML (its content was kept): email clients do not show it, so use text, links, images and tables.',
      'The <input> element was removed from the HTML (its content was kept): email clients do not show it, so use text, links, images and tables.',
      'The <button> element was removed from the HTML (its content was kept): email clients do not show it, so use text, links, images and tables.',
      'The <style> element was removed from the HTML: email clients drop it from the body of a message, so put the styles in style attributes instead.',
      'The <link> element was removed from the HTML: an email loads no external stylesheet, so put the styles in style attributes instead.',
      "The <div> element's style was removed from the HTML: it ran code in some email clients (expression, behavior, javascript:): write plain CSS.",
      "The <td> element's event handler (onclick) was removed from the HTML: email clients never run scripts.",
      'The <td> element\'s attribute "o{{ x }}nclick" was removed from the HTML: Liquid may choose whether an attribute is written, not write its name.',
    ]);
    expect(sanitized.filter((w) => w.path !== '/blocks/0').map((w) => `${w.path} ${w.message}`)).toEqual([
      "/blocks/1/columns/0/0 The <b> element's event handler (onmouseover) was removed from the HTML: email clients never run scripts.",
    ]);

    // As stored: the html blocks sanitised (their Liquid kept and still parsing), a clean block as written.
    const stored = sanitizeDocument(d);
    expect(stored).not.toBe(d);
    expect(d.blocks[0]).toEqual({ type: 'html', html: unsafe }); // the given document is not changed
    const first = stored.blocks[0] as { html: string };
    expect(first.html).not.toMatch(/script|onerror|onclick|nclick|javascript|iframe|<form|<style|<link/i);
    expect(first.html).toContain('{% if contact.firstName %} {% endif %}');
    expect(() => liquid.parse(first.html)).not.toThrow();
    expect(stored.blocks[1]).toEqual({
      type: 'columns',
      columns: [[{ type: 'html', html: '<b>in a column</b>' }], []],
    });
    expect(stored.blocks[2]).toBe(d.blocks[2]);
    // Sanitising is done once: the stored document has nothing more to remove, and renders the same.
    expect(sanitizeDocument(stored)).toBe(stored);
    expect(documentWarnings(stored).filter((w) => w.code === 'html_sanitized')).toEqual([]);
    expect((await renderDocument(stored, { publicUrl: PUBLIC_URL })).html).toBe(html);
    const clean = doc([{ type: 'html', html: '<p>Nothing to remove</p>' }]);
    expect(sanitizeDocument(clean)).toBe(clean);
  });

  it('removing markup never removes a Liquid tag: the Liquid still parses', () => {
    for (const source of [
      '<script>{% if contact.firstName %}</script>{% endif %}',
      '<a {% if contact.firstName %}href="/relative"{% endif %}>x</a>',
      '<!-- {% if contact.firstName %} -->x{% endif %}',
      '<iframe title="{% unless a %}">{% endunless %}</iframe>',
    ]) {
      const stored = sanitizeDocument(doc([{ type: 'html', html: source }]));
      const html = (stored.blocks[0] as { html: string }).html;
      expect(() => liquid.parse(html), `${source} → ${html}`).not.toThrow();
      expect(html, source).not.toMatch(/script|href|iframe/);
    }
  });

  it('any generated document renders to valid, safe HTML with its footer and every Liquid kept', async () => {
    await fc.assert(
      fc.asyncProperty(documentArbitrary(), fc.boolean(), async (d, withIcons) => {
        expect(validateDocument(d)).toEqual([]);
        const { html, text } = await renderDocument(d, withIcons ? { publicUrl: PUBLIC_URL } : {});
        expectEmailSafe(personalise(html));
        const json = JSON.stringify(d);
        for (const snippet of LIQUID_SNIPPETS)
          if (json.includes(JSON.stringify(snippet).slice(1, -1))) expect(html).toContain(snippet);
        expect(text).toContain('{{ unsubscribe_url }}');
        expect(() => liquid.parse(text)).not.toThrow();
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('the starter templates render under 102 KB, safe, and load nothing from elsewhere', async () => {
    for (const item of GALLERY) {
      expect(validateDocument(item.editorContent), item.id).toEqual([]);
      const { html, warnings } = await renderDocument(item.editorContent, {
        publicUrl: PUBLIC_URL,
        title: item.subject,
      });
      expect(Buffer.byteLength(html), item.id).toBeLessThanOrEqual(102 * 1024);
      expect(warnings, item.id).toEqual([]);
      const out = personalise(html);
      expectEmailSafe(out);
      const urls = [...out.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
      for (const u of urls)
        expect(u, item.id).toMatch(
          /^(https:\/\/example\.com(\/|$)|https:\/\/mail\.acme\.example\/assets\/social\/[a-z]+\.png$|https:\/\/mail\.example\.com\/unsubscribe\/)/,
        );
    }
  });
});
