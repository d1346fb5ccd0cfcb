import type { OperationDocs } from '../../http/operation-docs.js';

const FORM_ID = 'form_01JDB3M5Q8X2V7K9T4N6R1P0AZ';
const valid = { valid: true, checkedAt: '2026-11-21T10:05:00.000Z', errors: [], warnings: [] };
const draft = {
  id: FORM_ID,
  name: 'Newsletter sign-up',
  description: 'The footer form of the blog',
  type: 'SIGN_UP',
  display: 'INLINE_EMBED',
  fieldMapping: { email: 'email', first_name: 'firstName' },
  settings: { successAction: { type: 'MESSAGE', message: 'Thanks! Check your inbox to confirm.' }, doubleOptIn: true },
  doubleOptInEmailId: 'tmpl_01JDB3S8V0X2Z4B6D8F0H2K4M6',
  seoTitle: 'Join the Acme newsletter',
  seoDescription: 'One email a month about what we ship.',
  seoImageUrl: 'https://example.com/img/newsletter.png',
  seoFaviconUrl: null,
  slug: 'newsletter',
  status: 'DRAFT',
  version: 1,
  formGroupId: 'fgrp_01JDB3M5Q8X2V7K9T4N6R1P0B0',
  previousVersionId: null,
  htmlValidation: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  publishedAt: null,
  archivedAt: null,
};
const published = {
  ...draft,
  status: 'PUBLISHED',
  htmlValidation: valid,
  updatedAt: '2026-11-21T10:06:00.000Z',
  publishedAt: '2026-11-21T10:06:00.000Z',
};
const v2 = {
  ...published,
  id: 'form_01JDB4C3E5G7J9M1P3R5T7V9X1',
  status: 'DRAFT',
  version: 2,
  previousVersionId: FORM_ID,
  createdAt: '2026-11-22T09:00:00.000Z',
  updatedAt: '2026-11-22T09:00:00.000Z',
  publishedAt: null,
};
const html =
  '<form><label>Email <input name="email" type="email" required /></label><label>First name <input name="first_name" /></label><button>Subscribe</button></form>';

const tags = ['forms'];

export const formsDocs: OperationDocs = {
  'POST /v1/forms': {
    tags,
    summary: 'Create a form',
    description:
      'A new form group with its first version: a DRAFT, version 1. `name` (internal, never shown to visitors) and `type` (`SIGN_UP` creates or updates a contact; `SURVEY` only stores answers) are required. `fieldMapping` maps form field names to contact properties (`email`, `firstName`, `lastName` or a custom key); `slug` gives the hosted page its address `/f/{slug}`, unique across all workspaces (409 slug_taken). Needs `write:forms`.',
    request: {
      name: 'Newsletter sign-up',
      type: 'SIGN_UP',
      display: 'INLINE_EMBED',
      fieldMapping: { email: 'email', first_name: 'firstName' },
      slug: 'newsletter',
    },
    response: {
      ...draft,
      description: null,
      settings: {
        successAction: { type: 'MESSAGE', message: 'Thanks! Your submission has been received.' },
        doubleOptIn: false,
      },
      doubleOptInEmailId: null,
      seoTitle: null,
      seoDescription: null,
      seoImageUrl: null,
    },
  },
  'GET /v1/forms': {
    tags,
    summary: 'List forms',
    description:
      'Every version of every form of the workspace, newest first, filtered by `status` (`DRAFT`, `PUBLISHED`, `ARCHIVED`) if given, with cursor pagination. Each carries its `stats` (views, submissions, confirmations and the conversion: submissions per view), read with the page in one query. Needs `read:forms`.',
    response: {
      data: [
        { ...v2, stats: { views: 0, submissions: 0, confirmations: 0, conversion: null } },
        { ...published, stats: { views: 1204, submissions: 87, confirmations: 74, conversion: 0.0723 } },
      ],
      nextCursor: null,
    },
  },
  'GET /v1/forms/{formId}': {
    tags,
    summary: 'Get a form',
    description:
      'One version of a form, with its view, submission and confirmation counts and its conversion (submissions per view) in `stats`. Needs `read:forms`.',
    response: { ...published, stats: { views: 1204, submissions: 87, confirmations: 74, conversion: 0.0723 } },
  },
  'PUT /v1/forms/{formId}': {
    tags,
    summary: 'Update a form (DRAFT only)',
    description:
      'Update Form, partial: a field omitted is unchanged, a field present replaces the stored value whole (`settings` and `fieldMapping` are not merged), `null` clears an optional field. Every field of creation may be sent, plus the SEO fields. Only a DRAFT changes: a PUBLISHED or ARCHIVED form is 409 form_not_editable (create a new version). When the form has deployed HTML, a changed mapping is checked against it again (`htmlValidation`). Needs `write:forms`.',
    request: {
      description: 'The footer form of the blog',
      settings: {
        successAction: { type: 'MESSAGE', message: 'Thanks! Check your inbox to confirm.' },
        doubleOptIn: true,
      },
      doubleOptInEmailId: 'tmpl_01JDB3S8V0X2Z4B6D8F0H2K4M6',
      seoTitle: 'Join the Acme newsletter',
    },
    response: draft,
  },
  'DELETE /v1/forms/{formId}': {
    tags,
    summary: 'Delete a DRAFT version',
    description:
      'Deletes a DRAFT version. A PUBLISHED or ARCHIVED version is 409 form_not_editable: archive it by publishing another. Answers 204. Needs `write:forms`.',
  },
  'GET /v1/forms/{formId}/html': {
    tags,
    summary: 'Get the form HTML',
    description:
      'The custom HTML deployed to the form, with when it was deployed and how it matched the mapping; without custom HTML, the markup the service renders from `fieldMapping` (`deployedAt` null). Needs `read:forms`.',
    response: { html, deployedAt: '2026-11-21T10:05:00.000Z', htmlValidation: valid },
  },
  'PUT /v1/forms/{formId}/html': {
    tags,
    summary: 'Deploy custom HTML',
    description:
      'Deploys your own markup for the form (DRAFT only, up to 512 KiB). It is sanitized (no script, no event handlers, no `javascript:` URLs) and cross-validated against `fieldMapping`: a mapped field with no control is an error, a named control no mapping covers a warning. The result is stored in `htmlValidation`; an invalid one blocks publishing (422 form_incomplete). Needs `write:forms`.',
    request: {
      html: '<form><label>Email <input name="email" type="email" required></label><label>First name <input name="first_name"></label><button>Subscribe</button></form>',
    },
    response: { html, deployedAt: '2026-11-21T10:05:00.000Z', htmlValidation: valid },
  },
  'POST /v1/forms/{formId}/versions': {
    tags,
    summary: 'Create a new version',
    description:
      'A new DRAFT of a PUBLISHED form: new id, same `formGroupId` and slug, `version` + 1, `previousVersionId` the published one, configuration and HTML copied. Edit it, then publish it: the published version becomes ARCHIVED. 409 form_not_published for a form that is not PUBLISHED, 409 draft_version_exists (with `draftId`) when the group has a DRAFT already. No body. Needs `write:forms`.',
    response: v2,
  },
  'GET /v1/forms/{formId}/versions': {
    tags,
    summary: 'List the versions of a form',
    description:
      "Every version of the form's group, newest first: at most one PUBLISHED, the earlier ones ARCHIVED, maybe one DRAFT. Needs `read:forms`.",
    response: { data: [v2, published], nextCursor: null },
  },
  'POST /v1/forms/{formId}/publish': {
    tags,
    summary: 'Publish a form (or roll back)',
    description:
      'Makes a DRAFT, or an ARCHIVED version (a rollback), the PUBLISHED version of its group; in the same transaction the previously published version becomes ARCHIVED, so one version at most is ever published, also under concurrent publishes. A SIGN_UP form needs an `email` mapping and a valid `htmlValidation` (422 form_incomplete, listing what is missing); publishing the published version is 409 form_already_published. No body. Needs `write:forms`.',
    response: published,
  },
};
