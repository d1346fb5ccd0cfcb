import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['public'];

export const trackingDocs: OperationDocs = {
  'GET /t/o/{*}': {
    tags,
    summary: 'The open pixel',
    description:
      "The 1×1 GIF near the end of a tracked message's HTML (`Cache-Control: no-store`). Always answers the image, fast; when the signed token verifies, an `email.opened` event is recorded (after the answer, never lost). Opens by Apple Mail Privacy Protection and security scanners are kept but marked `machine: true` and left out of unique counts; Gmail's and Outlook's image proxies count as people. No API key.",
    responses: {
      200: {
        description: 'A 1×1 transparent GIF (image/gif, 43 bytes; the example is its base64), whatever the token.',
        contentType: 'image/gif',
        example: 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
      },
    },
  },
  'GET /t/c/{*}': {
    tags,
    summary: 'A tracked link',
    description:
      'Every http(s) link of a tracked message points here with a signed token naming the delivery and the URL: answers 302 to the original URL and records an `email.clicked` event. A token that does not verify is 404 and never redirects (no open redirect). Clicks by link scanners (before the message could be read, or every link within seconds) are marked `machine: true`. No API key.',
    responses: {
      302: { description: 'Redirect to the original URL (`Location`).' },
      404: {
        description: 'The token does not verify: a page, never a redirect.',
        example:
          '<h1>This link is not valid</h1><p>It may be mistyped, or cut short by your mail program. Try to open the link from the message again.</p>',
      },
    },
  },
};
