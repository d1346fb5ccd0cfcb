import { Type, type Static } from 'typebox';
import { Nullable, PathId } from '../../http/schema-helpers.js';

export const DmarcParams = Type.Object({ domainId: PathId }, { additionalProperties: false });

export const DmarcQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'first day, YYYY-MM-DD (UTC)' })),
    to: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'last day, YYYY-MM-DD (UTC)' })),
  },
  { additionalProperties: false },
);

const Day = Type.String({ description: 'YYYY-MM-DD (UTC)' });

const Totals = {
  messages: Type.Integer({ description: 'messages the receivers reported' }),
  pass: Type.Integer({ description: 'messages that passed DMARC: DKIM or SPF passed aligned with the From domain' }),
  fail: Type.Integer({ description: 'messages that failed DMARC' }),
  spfAligned: Type.Integer({ description: 'messages whose SPF passed aligned' }),
  dkimAligned: Type.Integer({ description: 'messages whose DKIM passed aligned' }),
  quarantined: Type.Integer({ description: 'messages the receivers put in spam (disposition quarantine)' }),
  rejected: Type.Integer({ description: 'messages the receivers refused (disposition reject)' }),
};

export const DmarcReportSchema = Type.Object({
  domain: Type.Object({ id: Type.String(), name: Type.String() }),
  from: Day,
  to: Day,
  summary: Type.Object({
    ...Totals,
    passRate: Nullable(Type.Number({ description: 'pass / messages, a fraction; null without messages' })),
    sources: Type.Integer({ description: 'distinct source IPs' }),
    reports: Type.Integer({ description: 'reports received for the range' }),
    reporters: Type.Array(Type.String(), { description: 'the organisations that sent them' }),
  }),
  days: Type.Array(Type.Object({ day: Day, messages: Type.Integer(), pass: Type.Integer(), fail: Type.Integer() }), {
    description: 'per day with reports, oldest first',
  }),
  sources: Type.Array(
    Type.Object({
      ip: Type.String({ description: 'the address that sent mail with your domain in From' }),
      ...Totals,
      firstDay: Day,
      lastDay: Day,
      reporters: Type.Array(Type.String()),
      headerFrom: Type.Array(Type.String({ description: 'the From domains seen from it' })),
      why: Type.Array(Type.Object({ reason: Type.String(), messages: Type.Integer() }), {
        description: 'why its messages failed, most messages first',
      }),
    }),
    { description: 'the source IPs, most messages first (at most 200)' },
  ),
  rows: Type.Array(
    Type.Object({
      day: Day,
      reporter: Type.String(),
      reportId: Type.String(),
      sourceIp: Type.String(),
      messages: Type.Integer(),
      disposition: Type.String({ description: 'none, quarantine or reject' }),
      dmarc: Type.String({ description: 'pass or fail' }),
      dkim: Type.String({ description: "the receiver's aligned DKIM verdict: pass or fail" }),
      spf: Type.String({ description: "the receiver's aligned SPF verdict: pass or fail" }),
      headerFrom: Type.String(),
      envelopeFrom: Nullable(Type.String()),
      dkimResults: Type.Array(
        Type.Object({ domain: Type.String(), selector: Nullable(Type.String()), result: Type.String() }),
      ),
      spfResults: Type.Array(
        Type.Object({ domain: Type.String(), scope: Nullable(Type.String()), result: Type.String() }),
      ),
      reasons: Type.Array(Type.Object({ type: Type.String(), comment: Nullable(Type.String()) })),
      why: Nullable(Type.String({ description: 'why it failed, in words; null when it passed' })),
    }),
    { description: 'the records, newest day first, most messages first (at most 500)' },
  ),
  rowsTruncated: Type.Boolean({ description: 'true when the range has more records than `rows` shows' }),
});
export type DmarcReport = Static<typeof DmarcReportSchema>;
