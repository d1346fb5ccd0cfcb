import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['email documents'];

const document = {
  type: 'formcast/blocks',
  version: 1,
  settings: { brandColor: '#0b5fff' },
  blocks: [
    { type: 'heading', text: 'November news', level: 1 },
    { type: 'text', text: '<p>Hi {{ contact.firstName | default: "there" }}, here is what we shipped.</p>' },
    { type: 'image', url: 'https://mail.example.com/i/img_01JDB4A2C4E6G8J0K2M4P6R8T0.png', alt: '' },
    { type: 'button', text: 'Read the post', url: 'https://example.com/blog/november' },
    { type: 'footer' },
  ],
};

export const documentsDocs: OperationDocs = {
  'POST /v1/email-documents/render': {
    tags,
    summary: 'Render a block document',
    description:
      "Renders a block document (contract §16: `{ type: \"formcast/blocks\", version: 1, settings?, blocks }`) as a message of it would be sent, for a live preview, saving nothing: the whole HTML document (table layout, inline styles, the footer with the workspace's postal address and the unsubscribe link; `lang` is the workspace's locale), its text part, and the renderer's `warnings`, each at the JSON Pointer of its block in the document (an image without alt text, a button without a link, an empty block, a missing footer). The Liquid of its blocks is filled for `contactId` (a contact of the workspace; any other id is 404) or, without one, for the sample data of the broadcast preview; `contact`, `workspace` (`name`, `postal_address`) and `unsubscribe_url` (a preview address) are in scope, and `broadcast` is empty. A document that breaks the grammar is 422 validation_failed with one error per violation at its pointer (`/editorContent/blocks/3/url`). The same rendering runs on every write of an `emailContent` or a template whose `editorContent` is a block document. Needs `read:broadcasts`.",
    request: { editorContent: document, contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0' },
    response: {
      html: '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title></title>\n</head>\n<body>…<h1>November news</h1>…<p>Hi Ada, here is what we shipped.</p>…<p>Acme Inc., 1 Main Street, Springfield, IL 62701, USA</p><p><a href="https://mail.example.com/unsubscribe/preview">Unsubscribe</a></p>…</body>\n</html>\n',
      text: 'NOVEMBER NEWS\n\nHi Ada, here is what we shipped.\n\nRead the post: https://example.com/blog/november\n\n--\nAcme Inc., 1 Main Street, Springfield, IL 62701, USA\nUnsubscribe: https://mail.example.com/unsubscribe/preview\n',
      warnings: [
        {
          path: '/blocks/2',
          code: 'image_alt_missing',
          message:
            'The image has no alternative text: readers who do not load images, and screen readers, get nothing. Describe it in a few words.',
          level: 'warning',
        },
      ],
    },
  },
};
