/** Text as HTML: the five characters that could end an element or an attribute value, as entities. */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * An HTML fragment as a whole document; a whole document as it is, but given `lang` when its `<html>` has none and
 * `title` when its `<title>` is empty or missing (a rendered block document carries neither: docs/email-documents-api.md).
 */
export function asDocument(html: string, title: string, lang: string): string {
  if (/<html[\s>]/i.test(html)) return completeDocument(html, title, lang);
  return `<!doctype html>\n<html lang="${lang}">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n${html}\n</body>\n</html>\n`;
}

function completeDocument(html: string, title: string, lang: string): string {
  // Only the part before <body> is read and changed (per message: the body of a rendered document is most of it).
  const body = html.search(/<body[\s>]/i);
  const cut = body < 0 ? html.length : body;
  let head = html.slice(0, cut);
  head = head.replace(/<html(\s[^>]*)?>/i, (tag, attrs: string | undefined) =>
    attrs && /\slang\s*=/i.test(attrs) ? tag : `<html lang="${escapeHtml(lang)}"${attrs ?? ''}>`,
  );
  if (title) {
    if (/<title(\s[^>]*)?>\s*<\/title>/i.test(head))
      head = head.replace(
        /<title(\s[^>]*)?>\s*<\/title>/i,
        (_m, attrs: string | undefined) => `<title${attrs ?? ''}>${escapeHtml(title)}</title>`,
      );
    else if (!/<title[\s>]/i.test(head) && /<head(\s[^>]*)?>/i.test(head))
      head = head.replace(/<head(\s[^>]*)?>/i, (tag) => `${tag}\n<title>${escapeHtml(title)}</title>`);
  }
  return cut === html.length ? head : head + html.slice(cut);
}
