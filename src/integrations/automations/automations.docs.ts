import type { OperationDocs } from '../../http/operation-docs.js';

const trigger = { type: 'form.submitted', filter: null, formGroupId: 'fgrp_01JDB3M5Q8X2V7K9T4N6R1P0B0' };
const steps = [
  {
    id: 'welcome',
    type: 'send',
    from: 'Acme <hello@example.com>',
    replyTo: null,
    emailContent: {
      subject: 'Welcome, {{ contact.firstName | default: "friend" }}',
      html: '<p>Glad you are here.</p>',
      text: null,
      previewText: null,
      editorContent: null,
    },
  },
  { id: 'two-days', type: 'wait', duration: 'P2D' },
  { id: 'tag', type: 'update', properties: { onboarded: true } },
];
const automation = {
  id: 'aut_01JDB3Z2H4K6M8P0R2T4V6X8Z0',
  name: 'Welcome series',
  status: 'DRAFT',
  trigger,
  steps,
  version: 1,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};
const active = { ...automation, status: 'ACTIVE', updatedAt: '2026-11-21T10:10:00.000Z' };

const tags = ['automations'];

export const automationsDocs: OperationDocs = {
  'POST /v1/automations': {
    tags,
    summary: 'Create an automation',
    description:
      "A trigger and a tree of steps (docs/automations.md). Steps without an `id` get one. 422 validation_failed lists every problem with its path; ids of topics, segments and form groups must be of the workspace (422 invalid_reference). A `webhook` step needs write:webhooks too (403 insufficient_scope). A `send` step's content is Liquid with `contact`, `broadcast`, `unsubscribe_url` and `workspace` (`name`, `postal_address`) in scope; when its `emailContent.editorContent` is a block document (contract §16) its `html` and `text` are rendered from it on every write, and a bad document is 422 at the pointer of the bad block (`/steps/0/emailContent/editorContent/blocks/2/url`).",
    request: {
      name: 'Welcome series',
      trigger: { type: 'form.submitted', formGroupId: 'fgrp_01JDB3M5Q8X2V7K9T4N6R1P0B0' },
      steps: [
        {
          id: 'welcome',
          type: 'send',
          from: 'Acme <hello@example.com>',
          emailContent: {
            subject: 'Welcome, {{ contact.firstName | default: "friend" }}',
            html: '<p>Glad you are here.</p>',
          },
        },
        { id: 'two-days', type: 'wait', duration: 'P2D' },
        { id: 'tag', type: 'update', properties: { onboarded: true } },
      ],
    },
    response: automation,
  },
  'GET /v1/automations': {
    tags,
    summary: 'List automations',
    description:
      "The workspace's automations, newest first, filtered by `status` if given, with cursor pagination. Needs `read:broadcasts`.",
    response: { data: [active], nextCursor: null },
  },
  'GET /v1/automations/{automationId}': {
    tags,
    summary: 'Get an automation',
    description:
      'An automation as its current version has it: trigger, steps, status and version. Needs `read:broadcasts`.',
    response: active,
  },
  'PUT /v1/automations/{automationId}': {
    tags,
    summary: 'Update an automation',
    description:
      'A DRAFT changes in place. New `trigger` or `steps` on an ACTIVE or PAUSED automation make a new `version` (422 automation_incomplete if it could not run); runs in progress finish on the version they started.',
    request: { name: 'Welcome series (2026)' },
    response: { ...active, name: 'Welcome series (2026)', updatedAt: '2026-11-22T14:30:00.000Z' },
  },
  'DELETE /v1/automations/{automationId}': {
    tags,
    summary: 'Delete a DRAFT automation',
    description: 'One that ran keeps its runs and stats: 409 invalid_state (pause it).',
  },
  'POST /v1/automations/{automationId}/activate': {
    tags,
    summary: 'Activate an automation',
    description:
      '422 automation_incomplete with one entry per step path when a step lacks what it needs (a send without a from on a verified domain, a subject or a body; a webhook URL the SSRF guard refuses). Runs of a PAUSED automation go on where they were.',
    response: active,
  },
  'POST /v1/automations/{automationId}/pause': {
    tags,
    summary: 'Pause an automation',
    description:
      'ACTIVE → PAUSED: no contact enters, and runs stop where they are until it is activated again. 409 invalid_state from any other status. No body. Needs `write:broadcasts`.',
    response: { ...active, status: 'PAUSED', updatedAt: '2026-11-22T14:30:00.000Z' },
  },
  'POST /v1/automations/{automationId}/trigger': {
    tags,
    summary: 'Start a run for a contact',
    description:
      '202 with the run; a contact already in a run of the automation gets that run (`started: false`). 409 invalid_state unless the automation is ACTIVE with an api trigger.',
    request: { contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0' },
    response: { runId: 'run_01JDB49E6G8J0M2P4R6T8V0X2Z', started: true },
  },
  'POST /v1/automations/{automationId}/simulate': {
    tags,
    summary: 'Simulate an automation',
    description:
      'A real contact (`contactId`) or a made-up one (`contact`): the steps it would take, the arm of each branch and split, the time from entry of each, the rendered subject of each send. Nothing is written.',
    request: { contact: { email: 'lin@example.com', firstName: 'Lin', properties: { plan: 'free' } } },
    response: {
      steps: [
        { stepId: 'welcome', type: 'send', at: 'PT0S', subject: 'Welcome, Lin' },
        { stepId: 'two-days', type: 'wait', at: 'PT0S' },
        { stepId: 'tag', type: 'update', at: 'P2D' },
      ],
      exited: null,
    },
  },
  'GET /v1/automations/{automationId}/runs': {
    tags,
    summary: 'List the runs of an automation',
    description:
      'One run per contact that entered, newest first, with cursor pagination and `status` and `contactId` filters: the version it runs, the step it is at and when that is due, and why it exited early (unsubscribed, bounced, complained, deleted, an exit step, or a loop guard: `guard: cycle: …`, `guard: depth: …`, `guard: cooldown: …`, `guard: daily cap: …`, docs/automations.md). Needs `read:broadcasts`.',
    response: {
      data: [
        {
          id: 'run_01JDB49E6G8J0M2P4R6T8V0X2Z',
          contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
          version: 1,
          status: 'WAITING',
          stepId: 'two-days',
          dueAt: '2026-11-23T11:15:03.000Z',
          enteredAt: '2026-11-21T11:15:03.000Z',
          finishedAt: null,
          exitReason: null,
        },
      ],
      nextCursor: null,
    },
  },
  'GET /v1/automations/{automationId}/stats': {
    tags,
    summary: 'Per-step stats of an automation',
    description:
      'For each step of the current version: how many runs entered and completed it, and for a send, how many messages were sent, opened and clicked (by people). Needs `read:broadcasts`.',
    response: {
      steps: [
        { stepId: 'welcome', entered: 412, completed: 409, sent: 409, opened: 266, clicked: 91 },
        { stepId: 'two-days', entered: 409, completed: 301, sent: 0, opened: 0, clicked: 0 },
        { stepId: 'tag', entered: 301, completed: 301, sent: 0, opened: 0, clicked: 0 },
      ],
    },
  },
};
