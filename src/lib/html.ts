/** Text as HTML: the five characters that could end an element or an attribute value, as entities. */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** An HTML fragment as a whole document; a whole document as it is. */
export function asDocument(html: string, title: string, lang: string): string {
  if (/<html[\s>]/i.test(html)) return html;
  return `<!doctype html>\n<html lang="${lang}">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n${html}\n</body>\n</html>\n`;
}
