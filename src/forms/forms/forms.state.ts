import { type DomainError, conflict } from '../../errors/errors.js';
import type { FormStatus } from '../../db/schema.js';

/**
 * The form state machine, in one place (docs/api.md §4).
 * Every operation against every status is either the status it leads to or the error it answers.
 * `supersede` is what happens to the group's PUBLISHED version when another version is published.
 * `createVersion` leaves the form itself PUBLISHED (the new DRAFT is another row).
 */
export const FORM_OPERATIONS = ['update', 'deployHtml', 'delete', 'createVersion', 'publish', 'supersede'] as const;
export type FormOperation = (typeof FORM_OPERATIONS)[number];

type Outcome = FormStatus | 'DELETED' | (() => DomainError);

const notEditable = () =>
  conflict(
    'form_not_editable',
    'published and archived forms are immutable; create a new version (POST /v1/forms/{formId}/versions) and edit that',
  );
const notPublished = () =>
  conflict('form_not_published', 'only a PUBLISHED form can have a new version; edit this draft directly');
const notPublishedArchived = () =>
  conflict(
    'form_not_published',
    'only the PUBLISHED version can have a new version; publish this archived version first to roll back to it',
  );
const alreadyPublished = () => conflict('form_already_published', 'this form is already the published version');
const invalidState = (what: string) => () => conflict('invalid_state', what);

export const FORM_TRANSITIONS: Record<FormStatus, Record<FormOperation, Outcome>> = {
  DRAFT: {
    update: 'DRAFT',
    deployHtml: 'DRAFT',
    delete: 'DELETED',
    createVersion: notPublished,
    publish: 'PUBLISHED',
    supersede: invalidState('a draft is not the published version'),
  },
  PUBLISHED: {
    update: notEditable,
    deployHtml: notEditable,
    delete: notEditable,
    createVersion: 'PUBLISHED',
    publish: alreadyPublished,
    supersede: 'ARCHIVED',
  },
  ARCHIVED: {
    update: notEditable,
    deployHtml: notEditable,
    delete: notEditable,
    createVersion: notPublishedArchived,
    publish: 'PUBLISHED', // a rollback
    supersede: invalidState('an archived version is not the published version'),
  },
};

/**
 * The statuses, in the table's order: the one list, from which the API's schema is built (forms.schemas.ts). The table
 * is a Record of the column's type (db/schema.ts), so it names each status once and none other.
 */
export const FORM_STATUSES = Object.keys(FORM_TRANSITIONS) as FormStatus[];

/** The status `op` leads to from `status`, or throws the documented error for a move that is not allowed. */
export function transition(status: FormStatus, op: FormOperation): FormStatus | 'DELETED' {
  const outcome = FORM_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}
