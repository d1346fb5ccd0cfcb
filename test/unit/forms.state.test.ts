import { describe, expect, it } from 'vitest';
import { expectRefused } from '../helpers/transitions.js';
import { FORM_STATUSES } from '../../src/forms/forms/forms.schemas.js';
import { FORM_OPERATIONS, transition } from '../../src/forms/forms/forms.state.js';

/** Every status against every operation: the whole table, spelled out independently of its source. */
const expected: Record<string, Record<string, string>> = {
  DRAFT: {
    update: 'DRAFT',
    deployHtml: 'DRAFT',
    delete: 'DELETED',
    createVersion: 'form_not_published',
    publish: 'PUBLISHED',
    supersede: 'invalid_state',
  },
  PUBLISHED: {
    update: 'form_not_editable',
    deployHtml: 'form_not_editable',
    delete: 'form_not_editable',
    createVersion: 'PUBLISHED',
    publish: 'form_already_published',
    supersede: 'ARCHIVED',
  },
  ARCHIVED: {
    update: 'form_not_editable',
    deployHtml: 'form_not_editable',
    delete: 'form_not_editable',
    createVersion: 'form_not_published',
    publish: 'PUBLISHED',
    supersede: 'invalid_state',
  },
};

describe('form state machine', () => {
  for (const status of FORM_STATUSES) {
    for (const op of FORM_OPERATIONS) {
      const want = expected[status]![op]!;
      it(`${status} × ${op} → ${want}`, () => {
        if (/^[a-z_]+$/.test(want)) {
          expectRefused(() => transition(status, op), want);
        } else {
          expect(transition(status, op)).toBe(want);
        }
      });
    }
  }
});
