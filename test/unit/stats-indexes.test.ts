import { expect, it } from 'vitest';
import { DELIVERY_MARKS } from '../../src/db/migrations/0038_stats_indexes.js';
import { DELIVERY_MARKS_PREDICATE } from '../../src/sending/deliveries/deliveries.repository.js';
import { OUTBOX_RESPONSE } from '../../src/mail/transport.js';

// A partial index serves a query only when the query carries the index's condition as it is: the stats' query and
// migration 0038 must say the same text (the migration's is frozen, so a change of the outbox's answer shows here).
it("the stats' marked deliveries are the condition of migration 0038's partial index, word for word", () => {
  expect(DELIVERY_MARKS_PREDICATE).toBe(DELIVERY_MARKS);
  expect(DELIVERY_MARKS).toContain(`'${OUTBOX_RESPONSE}%'`);
});
