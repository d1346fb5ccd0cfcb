/**
 * The template's links as written (src/sending/tracking/tracking.links.ts): which hrefs become link patterns, how
 * Liquid becomes wildcards, and which clicked URL matches which written link (exact ones first, then the most specific).
 */
import { describe, expect, it } from 'vitest';
import {
  globPattern,
  likePattern,
  matchOrder,
  matchesLink,
  templateLinks,
} from '../../src/sending/tracking/tracking.links.js';

const first = (urls: string[], html: string) => {
  const order = matchOrder(templateLinks([html]));
  return urls.map((u) => order.find((l) => matchesLink(l, u))?.written ?? null);
};

describe('template links', () => {
  it('reads the tracked hrefs with their Liquid, normalised as the rewrite normalises them', () => {
    const links = templateLinks([
      `<a href="HTTPS://Shop.Example/vip?email={{ contact.email | url_encode }}&amp;utm=x">a</a>
       <a href="https://shop.example">b</a>
       <a href="{{ unsubscribe_url }}">u</a> <a href="{{ webversion_url }}">w</a>
       <a href="mailto:x@example.com">m</a> <a href="https://kept.example/" data-no-track>k</a>
       <a href="https://shop.example/u/{{ contact.firstName }}/p">c</a>
       <a href="https://shop.example">b again</a>`,
    ]);
    expect(links.map((l) => [l.written, l.exact, l.literals])).toEqual([
      [
        'https://shop.example/vip?email={{ contact.email | url_encode }}&utm=x',
        null,
        ['https://shop.example/vip?email=', '&utm=x'],
      ],
      ['https://shop.example/', 'https://shop.example/', null],
      ['https://shop.example/u/{{ contact.firstName }}/p', null, ['https://shop.example/u/', '/p']],
    ]);
  });

  it('a {% %} tag and what it encloses are one gap', () => {
    const [link] = templateLinks([
      `<a href="https://x.example/p?a=1{% if vip %}&amp;vip=1{% else %}&amp;b=2{% endif %}&amp;z=9">o</a>`,
    ]);
    expect(link!.literals).toEqual(['https://x.example/p?a=1', '&z=9']);
    expect(matchesLink(link!, 'https://x.example/p?a=1&vip=1&z=9')).toBe(true);
    expect(matchesLink(link!, 'https://x.example/p?a=1&z=9')).toBe(true);
    expect(matchesLink(link!, 'https://x.example/p?a=2&z=9')).toBe(false);
  });

  it('matches a clicked URL to the first link: exact before personalised, the most specific first', () => {
    const html = `<a href="https://s.example/vip?email={{ e }}">1</a><a href="https://s.example/vip?email=team%40s.example">2</a>
      <a href="https://s.example/{{ p }}">3</a><a href="https://s.example/{{ p }}/deep/{{ q }}">4</a>`;
    expect(
      first(
        [
          'https://s.example/vip?email=team%40s.example',
          'https://s.example/vip?email=ada%40example.com',
          'https://s.example/a/deep/b',
          'https://s.example/anything',
          'https://other.example/',
        ],
        html,
      ),
    ).toEqual([
      'https://s.example/vip?email=team%40s.example',
      'https://s.example/vip?email={{ e }}',
      'https://s.example/{{ p }}/deep/{{ q }}',
      'https://s.example/{{ p }}',
      null,
    ]);
  });

  it('escapes the literal parts for LIKE and GLOB', () => {
    expect(likePattern(['https://x.example/50%_off\\', '?a=1'])).toBe('https://x.example/50\\%\\_off\\\\%?a=1');
    expect(globPattern(['https://x.example/a*b?[c]', ''])).toBe('https://x.example/a[*]b[?][[]c]*');
  });
});
