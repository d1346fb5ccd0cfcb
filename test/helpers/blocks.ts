import fc from 'fast-check';
import { FONT_FAMILIES, SOCIAL_NETWORKS, type BlockDocument, type LeafBlock } from '../../src/mail/blocks/grammar.js';
import { escapeHtml } from '../../src/lib/html.js';

/**
 * fast-check arbitraries of block documents (src/mail/blocks/grammar.ts): every kind of block, with Liquid in text and
 * URLs, awkward characters in text, nested inline formatting, columns of 2 and 3. Every document generated is valid
 * (test/unit/blocks.validate.test.ts checks it); the renderer's properties run over them.
 */

/** Liquid a document may hold, and the scope LIQUID_SCOPE fills it from. */
export const LIQUID_SNIPPETS = [
  '{{ contact.firstName }}',
  '{{ contact.firstName | default: "there" }}',
  '{{ contact.email }}',
  '{% if contact.firstName %}Hi {{ contact.firstName }}{% endif %}',
  '{{ contact.properties.plan | upcase }}',
];
export const LIQUID_SCOPE = {
  contact: {
    email: 'ada@example.com',
    firstName: 'Ada <Lovelace>',
    lastName: 'Lovelace',
    properties: { plan: 'pro', link: 'https://example.com/ada', photo: 'https://example.com/ada.png', id: 'c1' },
  },
  broadcast: { id: 'bc_1', name: 'November' },
  workspace: { postal_address: 'Acme Inc., 1 Main Street, Springfield' },
  unsubscribe_url: 'https://mail.example.com/unsubscribe/tok123',
};

const liquid = fc.constantFrom(...LIQUID_SNIPPETS);
/** Text with the characters that need escaping, accents and emoji; never a brace (no half Liquid). */
const plain = fc
  .array(fc.constantFrom(...'abc XYZ 012 <>&"\'/=;:.!?-_é漢😀\n'.split('')), { maxLength: 30 })
  .map((cs) => cs.join(''));
const textWithLiquid = fc
  .array(fc.oneof({ weight: 4, arbitrary: plain }, liquid), { maxLength: 4 })
  .map((p) => p.join(''));

const color = fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, '0')}`);
const align = fc.constantFrom('left' as const, 'center' as const, 'right' as const);
const linkUrl = fc.constantFrom(
  'https://example.com/',
  'https://example.com/a?x=1&y=2',
  'http://example.org/path#frag',
  'https://example.com/p?id={{ contact.properties.id }}&from=mail',
  '{{ contact.properties.link }}',
  'mailto:hello@example.com?subject=Hi',
);
const webUrl = fc.constantFrom(
  'https://example.com/u/1',
  'https://example.net/@acme',
  'https://example.com/{{ contact.properties.id }}',
);
const imageUrl = fc.constantFrom(
  'https://example.com/a.png',
  'https://cdn.example.com/img/hero.jpg?w=600&h=300',
  'https://example.com/img/{{ contact.properties.id }}.png',
  '{{ contact.properties.photo }}',
);

/** A text block's inline HTML: nested b/strong/i/em/u/a, line breaks, paragraphs, escaped text and Liquid. */
const inline = fc.letrec<{ node: string; nodes: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    plain.map(escapeHtml),
    liquid,
    fc.constant('<br>'),
    fc.tuple(fc.constantFrom('b', 'strong', 'i', 'em', 'u'), tie('nodes')).map(([t, c]) => `<${t}>${c}</${t}>`),
    fc.tuple(linkUrl, tie('nodes')).map(([u, c]) => `<a href="${escapeHtml(u)}">${c || 'link'}</a>`),
  ),
  nodes: fc.array(tie('node'), { maxLength: 3 }).map((n) => n.join('')),
})).nodes;
const inlineHtml = fc.oneof(
  inline,
  fc.array(inline, { minLength: 1, maxLength: 3 }).map((ps) => ps.map((p) => `<p>${p}</p>`).join('')),
);
const htmlSnippet = fc.constantFrom(
  '<table role="presentation" width="100%"><tr><td style="background:#eef;padding:12px">Cell {{ contact.firstName }}</td></tr></table>',
  '<div style="text-align:center"><a href="https://example.com/x?a=1&amp;b=2">Link</a></div>',
  '<p>Unclosed <b>bold',
  '<pre>line 1\n  line 2</pre>',
  '<img src="https://example.com/i.png" alt="An image" width="100">',
  '<ul><li>One</li><li>Two &amp; three</li></ul>',
  '',
  // What sanitising removes (contract §16: like §4's deployed HTML): valid, and nothing of it reaches the email.
  '<p>Hi</p><script>alert(1)</script>',
  '<img src="https://example.com/i.png" alt="x" onerror="alert(1)">',
  '<a href="javascript:alert(1)" onclick="alert(2)">Click</a><a href=" java\tscript:alert(1)">Tab</a>',
  '<iframe src="https://example.com"></iframe><form action="https://example.com"><input name="q"><button>Go</button></form>',
  '<style>p{color:red}</style><link rel="stylesheet" href="https://example.com/a.css">',
  '<div style="background:url(javascript:alert(1))">Bg</div><img src="data:image/png;base64,AAAA" alt="d">',
  '<svg onload="alert(1)"><circle r="1"/></svg><!--[if mso]><script>alert(1)</script><![endif]-->',
  '<table><tr><td {% if contact.firstName %}onclick="alert(1)"{% endif %} style="color:#333">Cell</td></tr></table>',
);

const leaf: fc.Arbitrary<LeafBlock> = fc.oneof(
  fc.record(
    {
      type: fc.constant('heading' as const),
      text: textWithLiquid,
      level: fc.constantFrom(1 as const, 2 as const, 3 as const),
      align,
    },
    { requiredKeys: ['type', 'text'] },
  ),
  fc.record({ type: fc.constant('text' as const), text: inlineHtml, align }, { requiredKeys: ['type', 'text'] }),
  fc.record(
    {
      type: fc.constant('image' as const),
      url: imageUrl,
      alt: textWithLiquid,
      width: fc.integer({ min: 16, max: 600 }),
      href: linkUrl,
      align,
    },
    { requiredKeys: ['type', 'url', 'alt'] },
  ),
  fc.record(
    {
      type: fc.constant('button' as const),
      // A button's text is at most 200 characters (grammar.ts); four Liquid snippets can pass it (seed 428216481).
      text: textWithLiquid.filter((t) => t.length <= 200),
      url: fc.oneof(linkUrl, fc.constant('')),
      color,
      textColor: color,
      align,
    },
    { requiredKeys: ['type', 'text', 'url'] },
  ),
  fc.record({ type: fc.constant('divider' as const), color }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('spacer' as const), height: fc.integer({ min: 4, max: 200 }) }),
  fc.record(
    {
      type: fc.constant('social' as const),
      links: fc.array(fc.record({ network: fc.constantFrom(...SOCIAL_NETWORKS), url: webUrl }), { maxLength: 12 }),
      align,
    },
    { requiredKeys: ['type', 'links'] },
  ),
  fc.record({
    type: fc.constant('html' as const),
    html: fc.array(htmlSnippet, { maxLength: 3 }).map((h) => h.join('')),
  }),
  fc.record({ type: fc.constant('footer' as const), text: textWithLiquid, align }, { requiredKeys: ['type'] }),
);

const columns = fc.integer({ min: 2, max: 3 }).chain((n) =>
  fc.record(
    {
      type: fc.constant('columns' as const),
      columns: fc.array(fc.array(leaf, { maxLength: 4 }), { minLength: n, maxLength: n }),
      widths: (n === 2
        ? fc.integer({ min: 10, max: 90 }).map((a) => [a, 100 - a])
        : fc.constantFrom([20, 30, 50], [34, 33, 33], [25, 50, 25])) as fc.Arbitrary<number[]>,
    },
    { requiredKeys: ['type', 'columns'] },
  ),
);

export function documentArbitrary(): fc.Arbitrary<BlockDocument> {
  return fc.record(
    {
      type: fc.constant('formcast/blocks' as const),
      version: fc.constant(1 as const),
      settings: fc.record(
        {
          width: fc.integer({ min: 320, max: 600 }),
          backgroundColor: color,
          contentBackgroundColor: color,
          textColor: color,
          brandColor: color,
          linkColor: color,
          fontFamily: fc.constantFrom(...(Object.keys(FONT_FAMILIES) as (keyof typeof FONT_FAMILIES)[])),
        },
        { requiredKeys: [] },
      ),
      blocks: fc.array(fc.oneof({ weight: 5, arbitrary: leaf }, { weight: 1, arbitrary: columns }), { maxLength: 10 }),
    },
    { requiredKeys: ['type', 'version', 'blocks'] },
  );
}
