/**
 * An audit log entry in plain words (docs/audit-log.md): "Lin created the API key “Zapier”". Who is the person's name
 * when the console knows it (else their email), "You" for the reader, the key's name for an API key.
 */
import type { paths } from '../../api/generated/schema';

export type AuditEntry = paths['/v1/audit-log']['get']['responses'][200]['content']['application/json']['data'][number];
export type AuditAction = AuditEntry['action'];

/** Each action: what it says after the actor, given the target's label in quotes. */
const WORDS: Record<AuditAction, (t: string) => string> = {
  'workspace.updated': () => 'changed the workspace settings',
  'api_key.created': (t) => `created the API key ${t}`,
  'api_key.revoked': (t) => `revoked the API key ${t}`,
  'user.created': (t) => `added ${t} to the workspace`,
  'user.invited': (t) => `invited ${t}`,
  'user.invitation_revoked': (t) => `withdrew the invitation of ${t}`,
  'user.joined': () => 'accepted the invitation and joined',
  'user.updated': (t) => `renamed ${t}`,
  'user.role_changed': (t) => `changed the role of ${t}`,
  'user.removed': (t) => `removed ${t} from the workspace`,
  'user.password_changed': () => 'changed their password',
  'user.2fa_enabled': () => 'turned on two-step sign-in',
  'user.2fa_disabled': () => 'turned off two-step sign-in',
  'domain.added': (t) => `added the domain ${t}`,
  'domain.updated': (t) => `changed the domain ${t}`,
  'domain.verified': (t) => `verified the domain ${t}`,
  'domain.removed': (t) => `removed the domain ${t}`,
  'webhook.created': (t) => `created a webhook to ${t}`,
  'webhook.updated': (t) => `changed the webhook to ${t}`,
  'webhook.deleted': (t) => `deleted the webhook to ${t}`,
  'webhook.secret_rotated': (t) => `replaced the signing secret of the webhook to ${t}`,
  'broadcast.sent': (t) => `sent the broadcast ${t}`,
  'broadcast.scheduled': (t) => `scheduled the broadcast ${t}`,
  'broadcast.unscheduled': (t) => `unscheduled the broadcast ${t}`,
  'broadcast.canceled': (t) => `canceled the broadcast ${t}`,
  'broadcast.paused': (t) => `paused the broadcast ${t}`,
  'broadcast.resumed': (t) => `resumed the broadcast ${t}`,
  'broadcast.ab_winner_picked': (t) => `picked the A/B winner of the broadcast ${t}`,
  'broadcast.resent': (t) => `made a resend of the broadcast ${t}`,
  'broadcast.archive_changed': (t) => `changed whether the public archive shows the broadcast ${t}`,
  'suppression.added': (t) => `suppressed ${t}`,
  'suppression.removed': (t) => `lifted the suppression of ${t}`,
  'template.deleted': (t) => `deleted the template ${t}`,
  'form.deleted': (t) => `deleted the form ${t}`,
};

/** The filter's choices: every action, grouped by what it acts on. */
export const ACTION_GROUPS: { label: string; value: string; actions: AuditAction[] }[] = [
  { label: 'Workspace settings', value: 'workspace', actions: ['workspace.updated'] },
  { label: 'API keys', value: 'api_key', actions: ['api_key.created', 'api_key.revoked'] },
  {
    label: 'People',
    value: 'user',
    actions: [
      'user.created',
      'user.invited',
      'user.invitation_revoked',
      'user.joined',
      'user.updated',
      'user.role_changed',
      'user.removed',
      'user.password_changed',
      'user.2fa_enabled',
      'user.2fa_disabled',
    ],
  },
  {
    label: 'Domains',
    value: 'domain',
    actions: ['domain.added', 'domain.updated', 'domain.verified', 'domain.removed'],
  },
  {
    label: 'Webhooks',
    value: 'webhook',
    actions: ['webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated'],
  },
  {
    label: 'Sends',
    value: 'broadcast',
    actions: [
      'broadcast.sent',
      'broadcast.scheduled',
      'broadcast.unscheduled',
      'broadcast.canceled',
      'broadcast.paused',
      'broadcast.resumed',
      'broadcast.ab_winner_picked',
      'broadcast.resent',
      'broadcast.archive_changed',
    ],
  },
  { label: 'Suppressions', value: 'suppression', actions: ['suppression.added', 'suppression.removed'] },
  { label: 'Deleted templates and forms', value: 'deleted', actions: ['template.deleted', 'form.deleted'] },
];

/** An action in a few words for the filter: "API keys: created". */
export function actionLabel(action: AuditAction): string {
  const words = WORDS[action]('').replace(/\s+$/, '');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who did it, in words. */
export function actorName(e: AuditEntry, me: string | undefined, names: Map<string, string>): string {
  if (e.actor.type === 'user') {
    if (e.actor.id && e.actor.id === me) return 'You';
    return (e.actor.id && names.get(e.actor.id)) || e.actor.label || 'Someone';
  }
  if (e.actor.type === 'apiKey') return `The API key “${e.actor.label ?? 'unnamed'}”`;
  if (e.actor.type === 'cli') return 'The formcast command';
  return 'Formcast';
}

/** The sentence: "Lin created the API key “Zapier”". */
export function describe(e: AuditEntry, me: string | undefined, names: Map<string, string>): string {
  const target = e.target.label ? `“${e.target.label}”` : 'an item';
  const words = WORDS[e.action] ?? (() => `did ${e.action.replace(/[._]/g, ' ')}`);
  return `${actorName(e, me, names)} ${words(target)}`;
}

/** Field names in words. */
const FIELDS: Record<string, string> = {
  name: 'name',
  role: 'role',
  status: 'status',
  sendAt: 'send time',
  url: 'address',
  eventTypes: 'events',
  description: 'description',
  enabled: 'on',
  scopes: 'permissions',
  trackingHost: 'tracking host',
  detail: 'note',
  reason: 'reason',
  secret: 'signing secret',
  key: 'key',
  password: 'password',
  dkimPrivateKey: 'signing key',
  'settings.locale': 'language',
  'settings.postalAddress': 'postal address',
  'settings.defaultFrom': 'default sender',
  'settings.tracking': 'tracking',
  'settings.brandColor': 'brand colour',
};

function value(v: unknown): string {
  if (v === null || v === undefined || v === '') return 'none';
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (typeof v === 'string') {
    if (/^\d{4}-\d\d-\d\dT/.test(v)) return new Date(v).toLocaleString();
    // A status (VERIFIED, SCHEDULED) reads as a word.
    return /^[A-Z][A-Z_]+$/.test(v) ? v.toLowerCase().replace(/_/g, ' ') : v;
  }
  if (Array.isArray(v)) return v.map(value).join(', ');
  if (typeof v === 'object')
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k} ${value(x)}`)
      .join(', ');
  return String(v);
}

/** Each changed field as a line: "role: editor → admin"; a secret: "signing secret: replaced". */
export function changeLines(e: AuditEntry): string[] {
  if (!e.changes) return [];
  return Object.entries(e.changes).map(([field, c]) => {
    const name = FIELDS[field] ?? field.replace(/^settings\./, '');
    if (c.secret) return `${name}: new (secrets are never shown)`;
    if (c.before === null || c.before === undefined) return `${name}: ${value(c.after)}`;
    return `${name}: ${value(c.before)} → ${value(c.after)}`;
  });
}
