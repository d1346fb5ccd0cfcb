/**
 * The preflight checks of a broadcast (POST /v1/broadcasts/{id}/preflight) in words for people: a title per check and
 * the detail without pointers or API calls; and what the send card's checklist needs (what blocks sending now, what
 * blocks scheduling).
 */
import { count } from './format';
import { PREFLIGHT_SENTENCE, plain } from './problems';

export interface PreflightCheck {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
}

const TITLES: Record<string, string> = {
  from: 'Sender',
  subject: 'Subject',
  body: 'Content',
  sender_domain: 'Sender’s domain',
  render: 'Personalisation',
  dns: 'DNS',
  dns_dkim: 'DKIM signature',
  dns_spf: 'SPF',
  dns_dmarc: 'DMARC',
  dns_dmarc_alignment: 'DMARC alignment',
  dns_bounce_mx: 'Bounce address',
  dns_tracking: 'Tracking domain',
  public_url: 'Secure links',
  audience: 'Audience',
  unsubscribe: 'Unsubscribe link',
  postal_address: 'Postal address',
  html_size: 'Size',
  open_pixel: 'Open tracking',
  images_alt: 'Image descriptions',
  http_links: 'Link security',
  document: 'Email blocks',
};

export function checkTitle(c: PreflightCheck): string {
  if (TITLES[c.id]) return TITLES[c.id]!;
  if (c.id.startsWith('empty_'))
    return `Missing ${c.id
      .slice('empty_'.length)
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()}`;
  if (c.id.startsWith('document_')) return 'Email blocks';
  // An A/B variant's checks (docs/ab-tests.md): ab_variant_<id>, or ab_variant_<id>_<check> per problem.
  const variant = /^ab_variant_([a-z0-9-]+?)(?:_(.+))?$/.exec(c.id);
  if (variant)
    return `Variant ${variant[1]!.toUpperCase()}${variant[2] ? `: ${checkTitle({ ...c, id: variant[2] })}` : ''}`;
  const words = c.id.replace(/[_-]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The check's detail, in words: what blocks sending as the send card says it, the rest without pointers and calls. */
export function checkDetail(c: PreflightCheck): string {
  if (c.status === 'fail' && PREFLIGHT_SENTENCE[c.id]) return PREFLIGHT_SENTENCE[c.id]!;
  if (c.id === 'postal_address')
    return 'Add the workspace’s postal address in Settings: the law (CAN-SPAM) asks for one in the footer.';
  if (c.id === 'audience' && c.status === 'warn')
    return 'Nobody would receive it: no subscribed contact is in its audience.';
  // Blocks named by their pointers ("(/emailContent/editorContent/blocks/2)"): the editor marks them.
  const detail = c.detail
    .replace(/\s*\((\/emailContent[^)]*)\)/g, '')
    .replace(/^\/abTest\/variants\/\d+ \(variant ([^)]+)\)\s*/, (_, id: string) => `Variant ${id.toUpperCase()}: `);
  return plain(detail);
}

/** One line of the send card's checklist. */
export interface ChecklistItem {
  id: string;
  label: string;
  done: boolean;
}

/**
 * What a broadcast needs before it can go out, from its preflight: a sender on a verified domain, a subject, content
 * that renders, and (to send now) someone to send to. The unsubscribe footer is always added, so it is always done.
 */
export function sendChecklist(checks: PreflightCheck[]): {
  items: ChecklistItem[];
  blocksSchedule: boolean;
  blocksSend: boolean;
} {
  const by = new Map(checks.map((c) => [c.id, c]));
  const status = (id: string) => by.get(id)?.status;
  const items: ChecklistItem[] = [
    { id: 'from', label: 'A sender (From)', done: status('from') === 'pass' },
    {
      id: 'sender_domain',
      label: 'The sender’s domain is verified',
      done: status('from') === 'pass' && status('sender_domain') === 'pass',
    },
    { id: 'subject', label: 'A subject', done: status('subject') === 'pass' },
    { id: 'body', label: 'Content (the email itself)', done: status('body') === 'pass' },
  ];
  if (status('render') === 'fail') items.push({ id: 'render', label: 'The email renders in time', done: false });
  const audience = by.get('audience');
  const n = audience ? /^(\d+) recipient/.exec(audience.detail) : null;
  const recipients = n ? Number(n[1]) : null;
  items.push({
    id: 'audience',
    label:
      audience?.status === 'pass' && recipients !== null
        ? `Someone to send to: ${count(recipients, 'recipient')}`
        : 'Someone to send to (at least one subscribed contact)',
    done: audience?.status === 'pass',
  });
  // A/B variants that cannot be sent (their own sender, content or rendering): one line each.
  for (const c of checks)
    if (c.status === 'fail' && c.id.startsWith('ab_variant_'))
      items.push({ id: c.id, label: `${checkTitle(c)} is ready to send`, done: false });
  items.push({ id: 'unsubscribe', label: 'An unsubscribe link (added to every message)', done: true });
  const blocksSchedule = checks.some((c) => c.status === 'fail');
  const blocksSend = blocksSchedule || audience?.status === 'warn';
  return { items, blocksSchedule, blocksSend };
}
