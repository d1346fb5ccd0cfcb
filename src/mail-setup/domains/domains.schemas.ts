import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';

export const DOMAIN_STATUSES = ['PENDING', 'VERIFIED', 'FAILED'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export const RECORD_STATUSES = ['VERIFIED', 'MISSING', 'MISMATCH', 'TIMEOUT', 'ERROR'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

export const CreateDomainBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'The domain messages are sent from, e.g. example.com. Internationalized names are stored as punycode.',
    }),
  },
  { additionalProperties: false },
);
export type CreateDomainInput = Static<typeof CreateDomainBody>;

export const DnsRecordSchema = Type.Object({
  type: StringEnum(['TXT', 'MX'] as const),
  name: Type.String({ description: 'fully qualified name of the record' }),
  value: Type.String({
    description:
      "TXT: the value to publish (DNS providers may split it into strings of at most 255 characters); MX: the mail server's host name",
  }),
  priority: Type.Optional(Type.Integer({ description: 'MX only: the preference' })),
});
export type DnsRecord = Static<typeof DnsRecordSchema>;

export const RecordCheckSchema = Type.Object({
  ...DnsRecordSchema.properties,
  status: StringEnum(RECORD_STATUSES, {
    description:
      'VERIFIED: published as expected; MISSING: no TXT record there; MISMATCH: TXT records there, none as expected; TIMEOUT: the DNS server did not answer in time; ERROR: the lookup failed',
  }),
  found: Type.Array(Type.String(), {
    description: 'every TXT value found at the name (the strings of each record joined)',
  }),
});

const PolicyCheck = (what: string) =>
  Type.Object({
    found: Type.Boolean(),
    record: Nullable(Type.String({ description: `the ${what} record found` })),
  });

export const VerificationSchema = Type.Object(
  {
    checkedAt: Timestamp,
    records: Type.Array(RecordCheckSchema, {
      description:
        'the records that decide the status, as the first two of `records`: the ownership token and the DKIM key',
    }),
    spf: PolicyCheck('SPF'),
    dmarc: PolicyCheck('DMARC'),
    bounce: Type.Object(
      {
        mx: Type.Object({
          found: Type.Boolean(),
          hosts: Type.Array(Type.String({ description: 'the MX hosts of the bounce domain' })),
        }),
        spf: PolicyCheck('SPF'),
      },
      {
        description:
          'the bounce domain (bounces.<domain>): its MX brings bounce reports to the inbound listener; advisory, it never fails the domain',
      },
    ),
    advice: Type.Array(Type.String(), {
      description: 'what to fix, in plain words; SPF and DMARC advice never blocks verification',
    }),
  },
  { description: 'the result of the last DNS check' },
);
export type Verification = Static<typeof VerificationSchema>;
export type RecordCheck = Verification['records'][number];

export const DomainSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'lower-case ASCII (punycode for internationalized names)' }),
  status: StringEnum(DOMAIN_STATUSES),
  records: Type.Array(DnsRecordSchema, {
    description:
      'the DNS records to publish: the ownership token, the DKIM public key, and for the bounce domain (bounces.<domain>) an MX record and an SPF record',
  }),
  createdAt: Timestamp,
  verifiedAt: Nullable(Timestamp),
  verification: Nullable(VerificationSchema),
});
export type Domain = Static<typeof DomainSchema>;

export const DomainListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(StringEnum(DOMAIN_STATUSES)),
  },
  { additionalProperties: false },
);

export const DomainParams = Type.Object({ domainId: PathId });
