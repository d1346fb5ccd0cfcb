import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../src/mail/compose.js';
import { prepareContent, renderContent, type RenderScope } from '../../src/sending/deliveries/message.content.js';
import { textTemplateOf } from '../../src/sending/deliveries/message.text.js';

/**
 * An email written in HTML alone gets its text part from a text template made once from the HTML template
 * (message.text.ts), not from each message's HTML. The reference is the way before: each message's rendered HTML turned
 * into text. The two read the same words in the same order (the wrapping of lines and a personalised heading's case
 * aside), for any template made of these pieces and any contact.
 */
const words = (text: string) => text.toLowerCase().split(/\s+/).filter(Boolean).join(' ');

const piece = fc.constantFrom(
  '<p>Hi {{ contact.firstName | default: "there" }},</p>',
  '<h1>News for {{ contact.firstName }}</h1>',
  '<h2>Plain heading</h2>',
  '<p>Your plan: {{ contact.properties.plan }}. Email {{ contact.email }}.</p>',
  '{% if contact.properties.plan == "pro" %}<p>Pro: thanks for {{ contact.properties.months }} months.</p>{% else %}<p>Try pro, {{ contact.firstName }}.</p>{% endif %}',
  '{% unless contact.firstName %}<p>Tell us your name.</p>{% endunless %}',
  '<ul><li>{{ contact.properties.plan }}</li><li>Second item</li></ul>',
  '<ol><li>One</li><li>Two, {{ contact.firstName }}</li></ol>',
  '<p><a href="https://acme.test/p?c={{ contact.properties.customerId }}">Your page</a></p>',
  '<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
  '<p><img src="https://acme.test/i.png" alt="Logo for {{ contact.firstName }}"></p>',
  '<table><tr><td>{{ contact.lastName }}</td><td>Second &amp; cell</td></tr></table>',
  '<p>Tom &amp; Jerry &lt;3 {{ "a & b" }}</p>',
  '<br>',
  '\n',
);
const name = fc.oneof(
  fc.constant(null),
  fc.constantFrom(
    'Ada',
    'Grace Hopper',
    'Tom & Jerry',
    '<b>bold</b>',
    'Émile',
    '  spaced  ',
    'x{{ y }}',
    'a\n\n-- \nb',
  ),
  fc.string({ maxLength: 12 }),
);
const contact = fc.record({
  email: fc.constantFrom('ada@example.com', 'a+b@example.org'),
  firstName: name,
  lastName: name,
  properties: fc.record({
    plan: fc.constantFrom('pro', 'free', ''),
    months: fc.nat({ max: 40 }),
    customerId: fc.constantFrom('c1', 'c&2', 'c 3'),
    tags: fc.array(fc.constantFrom('news', 'deals', 'a & b'), { maxLength: 3 }),
  }),
});
const scope = (c: RenderScope['contact']): RenderScope => ({
  contact: c,
  broadcast: { id: 'bc_1', name: 'News' },
  unsubscribe_url: 'https://acme.test/unsubscribe/tok',
  workspace: { name: 'Acme', postal_address: '1 Main St' } as unknown as RenderScope['workspace'],
});

describe('the text part of an HTML-only email, made once from its template', () => {
  it('reads the same words, in the same order, as each message’s HTML turned into text', () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 8 }), contact, (pieces, c) => {
        const html = `<!doctype html><html><head><title>News</title></head><body>${pieces.join('')}</body></html>`;
        const withTags = pieces.some((p) => p.includes('{%'));
        if (!(withTags && html.includes('<ol>'))) expect(textTemplateOf(html)).not.toBeNull();
        const content = { subject: 'Hi', html, text: null, previewText: null };
        const sent = prepareContent(content, { markLinks: true })(scope(c));
        const shown = renderContent(content, scope(c));
        // (Where it is not made, the text is made from each message's HTML, as the reference is.)
        if (sent.text === null) return;
        const reference = htmlToText(renderContent({ ...content, text: '' }, scope(c)).html!);
        expect(words(sent.text!)).toBe(words(reference));
        // A preview shows the text a send carries.
        expect(shown.text).toBe(sent.text);
        // A value's line breaks read as one space, as in the HTML: no line of the contact's own (a `-- ` among them).
        expect(sent.text).not.toMatch(/^-- $/m);
      }),
      { numRuns: 400 },
    );
  });

  it('is not made where Liquid could not be moved into text: each message’s HTML is turned into text then', () => {
    for (const html of [
      '<p>{{ contact.properties.bio | raw }}</p>',
      '<p style="color:{{ contact.properties.colour }}">x</p>',
      '<html><head><title>{{ contact.firstName }}</title></head><body><p>x</p></body></html>',
      '<p>{%- if contact.firstName -%}Hi{%- endif -%}</p>',
      '<p>{% raw %}{{ x }}{% endraw %}</p>',
      '<p>{% include "x" %}</p>',
      '<p>&#123;&#123; not liquid }}</p>',
      '<p>\ue000 {{ contact.firstName }}</p>',
      '<div style="display:none">{{ contact.firstName }}</div><p>x</p>',
      '<p {% if x %}class="a"{% endif %}>x</p>',
      '<ul>{% for t in contact.properties.tags %}<li>{{ t }}</li>{% endfor %}</ul>',
      '<ol>{% if contact.firstName %}<li>First</li>{% endif %}<li>Second</li></ol>',
      '<html><head><title>{{ contact.properties.secret }}</title></head><body><p>Hi &#xE000;</p></body></html>',
    ])
      expect(textTemplateOf(html), html).toBeNull();
    // Without one, a message's text is still its HTML's.
    const content = { subject: 'Hi', html: '<p>{{ contact.properties.bio | raw }}</p>', text: null, previewText: null };
    const c = { email: 'a@b.c', firstName: null, lastName: null, properties: { bio: '<b>Bold</b> bio' } };
    expect(prepareContent(content)(scope(c)).text).toBeNull();
  });
});
