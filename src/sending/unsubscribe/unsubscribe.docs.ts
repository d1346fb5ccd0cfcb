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
      "What the unsubscribe link of a message opens: a preference centre in the workspace's language, name and brand colour, saying where the address stands as stored (subscribed with its topics, pending, unsubscribed, or suppressed for a bounce, a complaint or by hand) and offering only what fits: leave the message's topic, choose topics, unsubscribe from everything with an optional reason, or subscribe again by a double opt-in confirmation email (not for a suppressed bounce, complaint or manual entry). A GET never changes anything (mail scanners fetch links). No API key.",
    response:
      '<!doctype html><html lang="en"><head><title>Your email preferences</title></head><body><main><h1>Your email preferences</h1><p>Emails from Acme</p><div><strong>ada@example.com is subscribed.</strong></div><form method="post"><input type="hidden" name="action" value="all"><button>Unsubscribe from everything</button></form></main></body></html>',
    responses: { 404: invalid },
  },
  'POST /unsubscribe/{token}': {
    tags,
    summary: 'Unsubscribe',
    description:
      "RFC 8058 one-click unsubscribe: mail clients POST `List-Unsubscribe=One-Click` here (every broadcast carries `List-Unsubscribe` and `List-Unsubscribe-Post`), which unsubscribes at once from the message's topic (or from everything when it had none). The page's own forms send `action=all` (everything; optional `reason` = too_many | not_relevant | never_signed_up | other and `comment`, up to 500 characters, stored on the `contact.unsubscribed` event), `action=topics` with the `topic` ids to keep (only while subscribed; otherwise 409, nothing saved), or `action=resubscribe` (an unsubscribed or pending address: queues a double opt-in confirmation email; a bounced, complained or manually suppressed one: 409, nothing changed). Unsubscribing from everything also suppresses the address. The answer is the page with the new state, never a redirect; input the page never sends is 400. No API key.",
    request: 'List-Unsubscribe=One-Click',
    requestType: 'application/x-www-form-urlencoded',
    response:
      '<!doctype html><html lang="en"><head><title>Unsubscribed</title></head><body><h1>Unsubscribed</h1><p>ada@example.com will not get Product news any more.</p></body></html>',
    responses: { 404: invalid },
  },
};
