import type { OperationDocs } from '../../http/operation-docs.js';

const submission = {
  id: 'sub_01JDB4D7G9K1N3Q5S7U9W1Y3A5',
  formId: 'form_01JDB3M5Q8X2V7K9T4N6R1P0AZ',
  formVersion: 1,
  data: { email: 'lin@example.com', first_name: 'Lin' },
  contactId: 'ct_01JDB4D7G9K1N3Q5S7U9W1Y3A6',
  source: 'API',
  createdAt: '2026-11-21T11:15:02.918Z',
  ip: '203.0.113.7',
  userAgent: 'acme-backend/2.3',
  consent: null,
  status: 'ACCEPTED',
  heldReasons: null,
  reviewedAt: null,
  answers: [
    { field: 'email', label: 'Email', type: 'email', value: 'lin@example.com' },
    { field: 'first_name', label: 'First name', type: 'text', value: 'Lin' },
  ],
};

const tags = ['forms'];

export const submissionsDocs: OperationDocs = {
  'POST /v1/forms/{formId}/submissions': {
    tags,
    summary: 'Submit to a form (headless)',
    description:
      "For forms you render yourself: a JSON object keyed by the form's field names, processed exactly like a hosted-page submission. The form (or its group) must be PUBLISHED (409 form_not_published). A SIGN_UP submission creates or updates the contact (its mapped `email` is required; with double opt-in the contact stays PENDING until confirmed); a SURVEY submission is stored without touching contacts. Values are checked against the form's fields (422 validation_failed, one entry per field), and a key that is no field of the published version (not in its `fieldMapping` or `settings.fields`) is refused the same way rather than dropped. Needs `write:forms`.",
    request: { email: 'lin@example.com', first_name: 'Lin' },
    response: submission,
  },
  'GET /v1/forms/{formId}/submissions': {
    tags,
    summary: 'List the submissions to a form',
    description:
      "Submissions to every version of the form's group, newest first, with cursor pagination: the values as sent, the answers labelled as the form showed them, and the contact each created or updated. Needs `read:forms`.",
    response: { data: [submission], nextCursor: null },
  },
  'POST /v1/forms/{formId}/submissions/{submissionId}/release': {
    tags,
    summary: 'Release a held submission',
    description:
      'A submission HELD for review (part of a burst of sign-ups, see docs/bot-protection.md) becomes RELEASED and does now what it would have done: the contact signed up, the confirmation email sent, `form.submitted` recorded. 409 invalid_state when it is not HELD. No body. Needs `write:forms`.',
    response: { ...submission, status: 'RELEASED', heldReasons: ['ip_range'], reviewedAt: '2026-11-21T12:00:00.000Z' },
  },
  'POST /v1/forms/{formId}/submissions/{submissionId}/discard': {
    tags,
    summary: 'Discard a held submission',
    description:
      'A submission HELD for review becomes DISCARDED: nobody is signed up or mailed, and it stays in the list for the record. 409 invalid_state when it is not HELD. No body. Needs `write:forms`.',
    response: {
      ...submission,
      contactId: null,
      status: 'DISCARDED',
      heldReasons: ['pattern', 'mailbox'],
      reviewedAt: '2026-11-21T12:00:00.000Z',
    },
  },
  'GET /v1/forms/{formId}/submissions/summary': {
    tags,
    summary: 'Summarise the answers per question',
    description:
      'The submissions to every version of the form\'s group (not those held for review or discarded), summed up by the questions of the version named: for select, radio and checkbox questions the count of each option (in the form\'s order, and `other` for answers that are no longer an option), for every question how many submissions answered it. See docs/forms.md, "Results". Needs `read:forms`.',
    response: {
      formId: 'form_01JDB3M5Q8X2V7K9T4N6R1P0AZ',
      formGroupId: 'fgrp_01JDB3M5Q8X2V7K9T4N6R1P0B0',
      total: 3,
      questions: [
        {
          field: 'plan',
          label: 'Which plan are you on?',
          type: 'select',
          answered: 3,
          options: [
            { value: 'Free', count: 1 },
            { value: 'Pro', count: 2 },
            { value: 'Team', count: 0 },
          ],
          other: 0,
        },
        { field: 'comment', label: 'Anything else?', type: 'textarea', answered: 1 },
      ],
    },
  },
};
