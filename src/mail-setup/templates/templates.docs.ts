import type { OperationDocs } from '../../http/operation-docs.js';

const template = {
  id: 'tmpl_01JDB3S8V0X2Z4B6D8F0H2K4M6',
  name: 'Double opt-in',
  alias: 'double-opt-in',
  version: 1,
  subject: 'Please confirm your subscription',
  html: '<p>Hi {{ contact.firstName | default: "there" }}, <a href="{{ confirm_url }}">confirm your subscription</a>.</p>',
  text: 'Hi {{ contact.firstName | default: "there" }}, confirm your subscription: {{ confirm_url }}',
  editorContent: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};

const tags = ['templates'];

export const templatesDocs: OperationDocs = {
  'POST /v1/templates': {
    tags,
    summary: 'Create a template',
    description:
      'Reusable email content: a form\'s double opt-in email (`doubleOptInEmailId`) or a starting point for broadcasts. `subject`, `html` and `text` are Liquid templates with `contact` and `workspace` (`name`, `postal_address`) in scope (and `form` and `confirm_url` for a confirmation email); a template that does not parse is 422 validation_failed. `editorContent` is what an editor stores: when it is a block document (`{ "type": "formcast/blocks", … }`, contract §16) the service renders `html` and `text` from it on every write, ignoring any html or text sent with it, and a document that breaks the grammar is 422 validation_failed at the JSON Pointer of the bad block (`/editorContent/blocks/3/url`). Needs `write:broadcasts`.',
    request: { name: template.name, subject: template.subject, html: template.html, text: template.text },
    response: template,
  },
  'GET /v1/templates': {
    tags,
    summary: 'List templates',
    description:
      "The workspace's templates, newest first, with cursor pagination (`limit`, `cursor`). Needs `read:broadcasts`.",
    response: { data: [template], nextCursor: null },
  },
  'GET /v1/templates/gallery': {
    tags,
    summary: 'List the starter gallery',
    description:
      "The starter documents of the email editor (contract §16): a newsletter, an announcement, a welcome email, an event invitation, a digest and a plain letter, each a block document (`editorContent`) with a name, a description and a subject line to start from. Put one in a broadcast's or a template's `emailContent.editorContent` and the service renders its HTML and text. The same for every workspace; not paginated (`nextCursor` is always null). Needs `read:broadcasts`.",
    response: {
      data: [
        {
          id: 'plain-letter',
          name: 'Plain letter',
          description:
            'A personal note in a serif font, with no images and no buttons: it reads like a letter from a person.',
          subject: 'A note from our founder',
          editorContent: {
            type: 'formcast/blocks',
            version: 1,
            settings: { fontFamily: 'serif', backgroundColor: '#f5f3ee' },
            blocks: [
              {
                type: 'text',
                text: '<p>Dear {{ contact.firstName | default: "reader" }},</p><p>Thank you for your trust.</p>',
              },
              { type: 'footer', text: 'You receive letters from Acme because you subscribed at example.com.' },
            ],
          },
        },
      ],
      nextCursor: null,
    },
  },
  'GET /v1/templates/{templateId}': {
    tags,
    summary: 'Get a template',
    description: 'One template with its content. Needs `read:broadcasts`.',
    response: template,
  },
  'PUT /v1/templates/{templateId}': {
    tags,
    summary: 'Update a template',
    description:
      'Partial: omitted fields are unchanged, `null` clears `subject`, `html`, `text` or `editorContent`. A block document sent in `editorContent` is rendered to `html` and `text`; while the template keeps one, an `html` or `text` sent without it is ignored (send `editorContent: null` with the html to edit the HTML by hand). Forms that use it send the new content from now on. Needs `write:broadcasts`.',
    request: { subject: 'One more step: confirm your subscription' },
    response: {
      ...template,
      subject: 'One more step: confirm your subscription',
      updatedAt: '2026-11-22T14:30:00.000Z',
    },
  },
  'DELETE /v1/templates/{templateId}': {
    tags,
    summary: 'Delete a template',
    description:
      'Answers 204. 409 resource_in_use while a form uses it as its double opt-in email. Needs `write:broadcasts`.',
  },
};
