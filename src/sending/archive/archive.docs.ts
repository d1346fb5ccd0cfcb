import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['public'];

const notFound = {
  description:
    'No such page: a token that does not verify, an unknown slug, a broadcast that is not this workspace’s, not SENT or not archived. Always the same plain page.',
  example: '<h1>Not found</h1><p>This page does not exist, or no longer does.</p>',
};

const message =
  '<!doctype html><html lang="en"><head><title>Hi Ada</title></head><body><p>Hello Ada, your plan is gold.</p></body></html>';

/** The public pages of docs/archive.md. */
export const archiveDocs: OperationDocs = {
  'GET /w/preview': {
    tags,
    summary: 'The web version link of a preview or a test send',
    description:
      "Previews and test sends put `/w/preview` in `{{ webversion_url }}`: a page that says each recipient's link opens their own copy. No API key.",
    response: '<h1>Web version</h1><p>Each recipient’s link opens their own copy of this email here, in a browser.</p>',
  },
  'GET /w/{token}': {
    tags,
    summary: 'The web version of a message',
    description:
      "What `{{ webversion_url }}` links: the recipient's own message in a browser, rendered again from the broadcast (or the automation's email) with their contact data as it is now and their own unsubscribe link; no open pixel, links as written (not rewritten for click tracking), `X-Robots-Tag: noindex`, not cached. The token is signed (it names the workspace and the delivery); a token that does not verify, or a message whose contact was deleted, is 404. No API key; rate-limited per visitor.",
    response: message,
    responses: { 404: notFound },
  },
  'GET /archive/{workspaceSlug}': {
    tags,
    summary: "A workspace's public email archive",
    description:
      "The workspace's SENT broadcasts whose `archive` is on, newest first, 20 a page (`?page=2`…): subject, date and link, in the workspace's name, brand colour and language, light and dark. The page links its Atom feed (`<link rel=\"alternate\">`). `workspaceSlug` is the workspace's `slug` (PUT /v1/workspace). No API key; rate-limited per visitor.",
    response:
      '<!doctype html><html lang="en"><head><title>Email archive · Acme</title><link rel="alternate" type="application/atom+xml" title="Acme" href="https://mail.example.com/archive/acme/feed.xml"></head><body><main><h1>Email archive</h1><ul class="fc-archive"><li><a href="https://mail.example.com/archive/acme/bc_01JDB2Z8K4M6P8R0T2V4X6Z8B0">November news</a><time datetime="2026-11-21T10:00:00.000Z">November 21, 2026</time></li></ul></main></body></html>',
    responses: { 404: notFound },
  },
  'GET /archive/{workspaceSlug}/feed.xml': {
    tags,
    summary: "The archive's Atom feed",
    description:
      'Atom 1.0 (`application/atom+xml`): the 20 newest archived broadcasts, each an entry with its id, title (the subject), link, published and updated times, summary (the preview text, or the start of the text) and the HTML content as an anonymous reader sees it. No API key.',
    response:
      '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"><id>https://mail.example.com/archive/acme/feed.xml</id><title type="text">Acme</title><updated>2026-11-21T10:00:00.000Z</updated><entry><id>tag:mail.example.com,2026-11-21:bc_01JDB2Z8K4M6P8R0T2V4X6Z8B0</id><title type="text">November news</title><link rel="alternate" type="text/html" href="https://mail.example.com/archive/acme/bc_01JDB2Z8K4M6P8R0T2V4X6Z8B0"/><updated>2026-11-21T10:00:00.000Z</updated><summary type="text">What is new this month</summary></entry></feed>',
    responses: { 404: notFound },
  },
  'GET /archive/{workspaceSlug}/{broadcastId}': {
    tags,
    summary: 'An archived broadcast',
    description:
      'The broadcast rendered for an anonymous reader: no contact data (`contact.*` renders empty, or its `| default:`), no unsubscribe link or token, no open pixel, links as written; the postal address stays. A bar above it links back to the archive and to the feed. Only a SENT broadcast of this workspace with `archive` on; anything else is 404. No API key.',
    response: message.replace('Ada', 'reader').replace('Hello Ada, your plan is gold.', 'Hello reader.'),
    responses: { 404: notFound },
  },
};
