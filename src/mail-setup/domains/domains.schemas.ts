import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { RELAY_PROFILES } from '../../mail/relay-profiles.js';

export const DOMAIN_STATUSES = ['PENDING', 'VERIFIED', 'FAILED'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export const RECORD_STATUSES = ['VERIFIED', 'MISSING', 'MISMATCH', 'TIMEOUT', 'ERROR'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

const TrackingHost = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 253,
    description:
      "A host name under the domain (e.g. links.example.com), a CNAME to the service's public host, used for the links and the open pixel of the domain's messages once its CNAME is verified; null: PUBLIC_URL's host (docs/deliverability.md)",
  }),
);

export const CreateDomainBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'The domain messages are sent from, e.g. example.com. Internationalized names are stored as punycode.',
    }),
    trackingHost: Type.Optional(TrackingHost),
  },
  { additionalProperties: false },
);
export type CreateDomainInput = Static<typeof CreateDomainBody>;

export const UpdateDomainBody = Type.Object({ trackingHost: TrackingHost }, { additionalProperties: false });
export type UpdateDomainInput = Static<typeof UpdateDomainBody>;

export const DnsRecordSchema = Type.Object({
  type: StringEnum(['TXT', 'MX', 'CNAME'] as const),
  name: Type.String({ description: 'fully qualified name of the record' }),
  value: Type.String({
    description:
      "TXT: the value to publish (DNS providers may split it into strings of at most 255 characters); MX: the mail server's host name; CNAME: the name it points at",
  }),
  priority: Type.Optional(Type.Integer({ description: 'MX only: the preference' })),
});
export type DnsRecord = Static<typeof DnsRecordSchema>;

export const RecordCheckSchema = Type.Object({
  ...DnsRecordSchema.properties,
  status: StringEnum(RECORD_STATUSES, {
    description:
      'VERIFIED: published as expected; MISSING: no record of the type there; MISMATCH: records there, none as expected; TIMEOUT: the DNS server did not answer in time; ERROR: the lookup failed',
  }),
  found: Type.Array(Type.String(), {
    description: 'every value of the type found at the name (TXT: the strings of each record joined)',
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
    // Optional: a check stored before these were checked has none of them (it is checked again by verify).
    envelope: Type.Optional(
      Type.Object(
        {
          relay: StringEnum(RELAY_PROFILES, { description: "the installation's relay profile (RELAY_PROFILE)" }),
          domain: Nullable(
            Type.String({
              description:
                "the envelope sender's (Return-Path's) domain: where receivers check SPF, and what DMARC aligns with From; null: the relay's own, per account (SendGrid)",
            }),
          ),
          spf: PolicyCheck('SPF'),
          records: Type.Array(RecordCheckSchema, { description: 'the records the relay needs there, each checked' }),
        },
        { description: 'SPF as receivers evaluate it: at the Return-Path domain, not the From domain' },
      ),
    ),
    alignment: Type.Optional(
      Type.Object(
        {
          spf: StringEnum(['relaxed', 'strict'] as const, {
            description: "the DMARC record's aspf (relaxed unless aspf=s)",
          }),
          spfAligns: Type.Boolean({
            description: 'false: aspf=s and a Return-Path on a subdomain, so SPF never aligns and DMARC rests on DKIM',
          }),
        },
        { description: 'DMARC alignment' },
      ),
    ),
    tracking: Type.Optional(
      Nullable(
        Type.Object(
          {
            ...DnsRecordSchema.properties,
            status: RecordCheckSchema.properties.status,
            found: Type.Array(Type.String()),
          },
          { description: "the tracking host's CNAME (null: the domain has none)" },
        ),
      ),
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
  trackingHost: Nullable(
    Type.String({
      description:
        "the host for its messages' links and open pixel (a CNAME to the service's public host), used once `verification.tracking` is VERIFIED; null: PUBLIC_URL's host",
    }),
  ),
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
