import type { OperationDocs } from '../../http/operation-docs.js';

const invalid = {
  description: 'The link is not valid (a token that does not verify).',
  example: '<h1>This link is not valid</h1><p>It may be mistyped or too old.</p>',
};

const tags = ['public'];

const testPage = {
  tags,
  summary: 'The unsubscribe link of a test send or a preview',
  description:
    "Test sends carry `/unsubscribe/test` (previews `/unsubscribe/preview`) where a recipient's own link would be, in `List-Unsubscribe` too. Following it, or a one-click POST to it, answers a page saying that this is a test message and that nothing was changed; `?lang=` (en, de, fr, es) is the workspace's language. No API key.",
  response:
    '<!doctype html><html lang="en"><head><title>This is a test message</title></head><body><h1>This is a test message</h1><p>This unsubscribe link is in a test send or a preview: following it changes nothing. In the real message each recipient gets a link of their own.</p></body></html>',
};

export const unsubscribeDocs: OperationDocs = {
  'GET /unsubscribe/test': testPage,
  'POST /unsubscribe/test': {
    ...testPage,
    request: 'List-Unsubscribe=One-Click',
    requestType: 'application/x-www-form-urlencoded',
  },
  'GET /unsubscribe/preview': testPage,
  'POST /unsubscribe/preview': {
    ...testPage,
    request: 'List-Unsubscribe=One-Click',
    requestType: 'application/x-www-form-urlencoded',
  },
  'GET /unsubscribe/{token}': {
    tags,
    summary: 'The unsubscribe page',
    description:
      'What the unsubscribe link of a message opens: the address, a button to unsubscribe from everything and the topics to keep or leave. A GET never unsubscribes by itself (mail scanners fetch links). No API key.',
    response:
      '<!doctype html><html lang="en"><head><title>Unsubscribe</title></head><body><h1>Unsubscribe</h1><p>ada@example.com</p><form method="post"><button name="action" value="all">Unsubscribe from everything</button></form></body></html>',
    responses: { 404: invalid },
  },
  'POST /unsubscribe/{token}': {
    tags,
    summary: 'Unsubscribe',
    description:
      "RFC 8058 one-click unsubscribe: mail clients POST `List-Unsubscribe=One-Click` here (every broadcast carries `List-Unsubscribe` and `List-Unsubscribe-Post`), which unsubscribes at once from the message's topic (or from everything when it had none). The page's own buttons send `action=all` (everything) or `action=topics` with the `topic` ids to keep. Records `contact.unsubscribed`; unsubscribing from everything also suppresses the address. No API key.",
    request: 'List-Unsubscribe=One-Click',
    requestType: 'application/x-www-form-urlencoded',
    response:
      '<!doctype html><html lang="en"><head><title>Unsubscribed</title></head><body><h1>Unsubscribed</h1><p>ada@example.com will not get Product news any more.</p></body></html>',
    responses: { 404: invalid },
  },
};
