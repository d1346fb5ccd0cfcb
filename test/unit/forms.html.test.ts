import { describe, expect, it } from 'vitest';
import {
  crossValidate,
  escapeHtml,
  namedControls,
  renderDefaultHtml,
  sanitizeFormHtml,
} from '../../src/forms/forms/forms.html.js';

describe('sanitizeFormHtml', () => {
  it('keeps form controls, labels and data-formcast attributes', () => {
    const html =
      '<form method="post"><label for="e">Email</label><input id="e" name="email" type="email" required>' +
      '<select name="plan"><option value="a">A</option></select><textarea name="note"></textarea>' +
      '<p data-formcast-error="email"></p><button type="submit">Go</button></form>';
    const out = sanitizeFormHtml(html);
    for (const piece of [
      '<label for="e">',
      'name="email"',
      'type="email"',
      'required',
      '<select name="plan">',
      '<textarea name="note">',
      'data-formcast-error="email"',
      '<button type="submit">',
    ]) {
      expect(out).toContain(piece);
    }
  });

  it.each([
    ['script', '<script>alert(1)</script><input name="a">', /script|alert/i],
    [
      'event handler',
      '<input name="a" onfocus="alert(1)"><img src="https://x/y.png" onerror="alert(1)">',
      /onfocus|onerror|alert/i,
    ],
    ['javascript: URL', '<a href="javascript:alert(1)">x</a><a href="JaVaScRiPt:alert(1)">y</a>', /javascript/i],
    ['form action', '<form action="https://evil.example/steal"><input name="a"></form>', /evil|action/],
    ['style element', '<style>body{background:url(https://evil)}</style><input name="a">', /style|evil/],
    ['iframe', '<iframe src="https://evil.example"></iframe>', /iframe|evil/],
    ['svg with script', '<svg><script>alert(1)</script></svg>', /svg|script|alert/],
    ['data: URL on a link', '<a href="data:text/html,<script>alert(1)</script>">x</a>', /data:|script/],
  ])('strips %s', (_label, html, forbidden) => {
    expect(sanitizeFormHtml(html)).not.toMatch(forbidden);
  });
});

describe('namedControls', () => {
  it('counts inputs, selects and textareas by name, but not submit/button/reset/image or buttons', () => {
    const html = `<form><input name="email" type="email"><input name="first"><input type="hidden" name="src">
      <input type="checkbox" name="tags[]" value="a"><input type="checkbox" name="tags[]" value="b">
      <select name="plan"></select><textarea name="note"></textarea>
      <input type="submit" name="go"><input type="button" name="b"><input type="reset" name="r"><input type="image" name="i">
      <button name="btn">x</button><input placeholder="no name"></form>`;
    expect([...namedControls(html)].sort()).toEqual(['email', 'first', 'note', 'plan', 'src', 'tags[]']);
  });

  it('parses like a browser (unclosed tags, uppercase)', () => {
    expect([...namedControls('<FORM><P><INPUT NAME=email TYPE=EMAIL><p><input name=x>')].sort()).toEqual([
      'email',
      'x',
    ]);
  });
});

describe('crossValidate', () => {
  const at = '2026-11-21T10:00:00.000Z';
  it('is valid when every mapped field has a control; unmapped controls are warnings', () => {
    expect(crossValidate({ email: 'email' }, '<input name="email"><input name="extra">', at)).toEqual({
      valid: true,
      checkedAt: at,
      errors: [],
      warnings: [{ code: 'control_not_mapped', field: 'extra' }],
    });
  });
  it('reports a mapped field without a control as an error', () => {
    const r = crossValidate({ email: 'email', first: 'firstName' }, '<input name="first">', at);
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([{ code: 'field_not_in_html', field: 'email' }]);
  });
  it('does not count a submit button as the field', () => {
    expect(
      crossValidate({ go: 'firstName' }, '<button name="go">Go</button><input type="submit" name="go">', at).errors,
    ).toEqual([{ code: 'field_not_in_html', field: 'go' }]);
  });
});

describe('renderDefaultHtml', () => {
  it('renders a labelled control per mapped field, escaping names', () => {
    const html = renderDefaultHtml({
      type: 'SIGN_UP',
      seoTitle: null,
      fieldMapping: { email: 'email', 'a"b': 'favorite_color' },
      settings: { appearance: { heading: '<b>Hi</b>' } },
    });
    expect(html).toContain('&lt;b&gt;Hi&lt;/b&gt;');
    expect(html).toContain('type="email"');
    expect(html).toContain('name="a&quot;b"');
    expect(html).toContain('Favorite color');
    expect([...namedControls(html)].sort()).toEqual(['a"b', 'email']);
  });
  it('escapes every special character', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
  });
});
