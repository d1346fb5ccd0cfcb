import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../lib/html.js';
import { sendCompressed, sendCompressedOnce } from '../lib/compress.js';

/**
 * Public pages (unsubscribe, hosted forms): server-rendered, no script, every value escaped, and a strict
 * Content-Security-Policy so that even an escaping mistake could not run code.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function page(title: string, body: string, head = '', lang = 'en'): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${head}<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1f2328; line-height: 1.5; }
  h1 { font-size: 1.4rem; }
  button { font: inherit; padding: .6rem 1.2rem; border: 0; border-radius: .4rem; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #eaeef2; color: #1f2328; }
  main > form + form { margin-top: .6rem; }
  fieldset { border: 1px solid #d0d7de; border-radius: .4rem; margin: 1rem 0; }
  label { display: block; margin: .3rem 0; }
  input, select, textarea { font: inherit; width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #8c959f; border-radius: .4rem; }
  input[type=checkbox], input[type=radio] { width: auto; }
  .fc-field { margin: 0 0 1rem; }
  .fc-error, [data-formcast-error] { color: #cf222e; margin: .25rem 0 0; font-size: .9rem; }
  [data-formcast-error-summary]:not(:empty) { color: #cf222e; font-weight: 600; }
  [aria-invalid=true] { border-color: #cf222e; }
  [data-formcast-success] { font-size: 1.1rem; }
  .fc-hp { position: absolute; left: -10000px; top: auto; width: 1px; height: 1px; overflow: hidden; }
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/**
 * Sends a page. `once` names a page that is the same every time for its key (a hosted form's page or success
 * page, keyed by the cached form): it is made and compressed once (http/compress.ts, sendCompressedOnce).
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string | (() => string),
  opts: { head?: string | (() => string); csp?: string; lang?: string; once?: { key: object; name: string } } = {},
): FastifyReply {
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', opts.csp ?? PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
  const make = () =>
    page(
      title,
      typeof body === 'function' ? body() : body,
      typeof opts.head === 'function' ? opts.head() : opts.head,
      opts.lang,
    );
  // Compressed (br or gzip) for browsers that accept it.
  if (opts.once) return sendCompressedOnce(reply.request, reply, opts.once.key, opts.once.name, make);
  return sendCompressed(reply.request, reply, make());
}
